package ui

import (
	"fmt"
	"strings"
	"testing"
)

// Output that scales (issue 15): plans and reports summarise long lists in
// text and table, list everything with -v/--verbose, and list everything
// in json. The helper and the flag here; the commands in
// cmd/summary_test.go, over partitions generated large enough to cross
// every threshold.

func TestListerCut(t *testing.T) {
	show := func(l Lister, n int) string {
		var b strings.Builder
		l.Lines(n, "items", func(i int) { fmt.Fprintf(&b, "%d ", i) }, func(more string) { b.WriteString("[" + more + "] ") })
		return strings.TrimSpace(b.String())
	}
	if got, want := show(Lister{}, ListWhole), strings.Trim(fmt.Sprint(seq(ListWhole)), "[]"); got != want {
		t.Errorf("%d items: %q, want every one", ListWhole, got)
	}
	got := show(Lister{}, 100)
	want := "0 1 2 3 4 5 6 7 8 9 [… 85 more items (100 in all; --verbose lists them) …] 95 96 97 98 99"
	if got != want {
		t.Errorf("100 items:\n got %q\nwant %q", got, want)
	}
	if got := show(Lister{All: true}, 100); got != strings.Trim(fmt.Sprint(seq(100)), "[]") {
		t.Errorf("100 items under --verbose: %q", got)
	}
	if got := (Lister{}).Offsets([]int64{1, 2, 3}); got != "1, 2, 3" {
		t.Errorf("short inline list: %q", got)
	}
	var long []int64
	for i := range 30 {
		long = append(long, int64(i*100))
	}
	if got, want := (Lister{}).Offsets(long), "0, 100, 200, 300, 400, 500, 600, 700, 800, 900, … 15 more …, 2500, 2600, 2700, 2800, 2900 (30 in all)"; got != want {
		t.Errorf("long inline list:\n got %q\nwant %q", got, want)
	}

	// Findings: a kind reported up to kindWhole times prints whole, a more
	// frequent one its first kindHead, with the count right after them.
	kinds := []string{"a", "b", "b", "a", "b", "b", "b", "b", "c", "b"}
	var b strings.Builder
	(Lister{}).ByKind(len(kinds), func(i int) string { return kinds[i] },
		func(i int) { fmt.Fprintf(&b, "%d%s ", i, kinds[i]) }, func(more string) { b.WriteString("[" + more + "] ") })
	if got, want := b.String(), "0a 1b 2b 3a 4b [… and 4 more b findings (--verbose lists them)] 8c "; got != want {
		t.Errorf("by kind:\n got %q\nwant %q", got, want)
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
