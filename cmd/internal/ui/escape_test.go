package ui

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEsc(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"billing", "billing"},
		{"", ""},
		{"flink-group.v2_ü漢字", "flink-group.v2_ü漢字"},
		{`DOMAIN\user`, `DOMAIN\user`},
		{"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"a\tb\nc\rd", `a\tb\nc\rd`},
		{"\x00\x07\x7f", `\x00\x07\x7f`},
		{"x\u009b31m", `x\u009b31m`},
		{"abc\u202edcba", `abc\u202edcba`},
		{"\xff\xfeok", `\xff\xfeok`},
		{"a\xe2\x82", `a\xe2\x82`}, // a truncated UTF-8 sequence, byte by byte
	} {
		if got := Esc(tc.in); got != tc.want {
			t.Errorf("esc(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestEscIsIdempotentAndSafe: whatever the input, the result holds no byte
// a terminal acts on, is valid UTF-8, and escaping it again changes
// nothing (printers and the table renderer may both escape a cell).
func TestEscIsIdempotentAndSafe(t *testing.T) {
	var inputs []string
	for c := range 256 {
		inputs = append(inputs, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"z")
	}
	inputs = append(inputs, "\u0085\u00a0\u2028\u2066x\u2069", "\xc0\x80", "\xed\xa0\x80")
	for _, in := range inputs {
		out := Esc(in)
		if !utf8.ValidString(out) {
			t.Errorf("esc(%q) = %q: not valid UTF-8", in, out)
		}
		for _, r := range out {
			if needsEscape(r, utf8.RuneLen(r)) {
				t.Errorf("esc(%q) = %q keeps %U", in, out, r)
			}
		}
		if again := Esc(out); again != out {
			t.Errorf("esc(esc(%q)) = %q, not %q", in, again, out)
		}
		if strings.ContainsRune(out, 0x1b) {
			t.Errorf("esc(%q) keeps ESC", in)
		}
	}
}

func BenchmarkEscClean(b *testing.B) {
	s := "console-consumer-12345-5f0c9a7e-3b1d-4c2e-9f6a-0123456789ab"
	b.ReportAllocs()
	for b.Loop() {
		_ = Esc(s)
	}
}

func TestEscMessage(t *testing.T) {
	in := "unknown command \"x\x1b[2J\"\n\nDid you mean this?\n\tdump"
	if got, want := EscMessage(in), "unknown command \"x\\x1b[2J\"\n\nDid you mean this?\n\tdump"; got != want {
		t.Errorf("escMessage = %q, want %q", got, want)
	}
}
