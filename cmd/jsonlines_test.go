package cmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// countLines counts the lines of out that contain sub.
func countLines(out, sub string) int {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}

// jsonLine decodes the first line of out whose "type" is typ.
func jsonLine(t *testing.T, out, typ string) map[string]any {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %v\n%s", err, l)
		}
		if m["type"] == typ {
			return m
		}
	}
	t.Fatalf("no %q line in\n%s", typ, out)
	return nil
}
