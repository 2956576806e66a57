package clitest

import (
	"encoding/json"
	"strings"
	"testing"
)

// TypedLines decodes, in order, the JSON lines of out (a -o json run's
// stdout) whose "type" is typ into Ts; a line that is not a JSON object
// fails the test.
func TypedLines[T any](t testing.TB, out, typ string) []T {
	t.Helper()
	var got []T
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(line), &head); err != nil {
			t.Fatalf("not a JSON line: %v\n%s", err, line)
		}
		if head.Type != typ {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("a %s line: %v\n%s", typ, err, line)
		}
		got = append(got, v)
	}
	return got
}
