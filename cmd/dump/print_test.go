package dump

import (
	"math/rand/v2"
	"testing"
	"unicode"
	"unicode/utf8"
)

// TestAppendValidUTF8 checks kafka output's text against Java's
// new String(bytes, UTF_8): whole runes are kept and every byte that can
// never start or continue a sequence (FF, FE, C0, a stray 80) becomes its
// own U+FFFD, where strings.ToValidUTF8 (kseg's old rendering) collapsed a
// run into one. decode.AppendJavaUTF8's own test covers truncated and
// surrogate sequences.
func TestAppendValidUTF8(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tokens := []struct{ in, want string }{
		{"a", "a"}, {"b", "b"}, {"\xc3\xa9", "\xc3\xa9"}, {"\xe2\x82\xac", "\xe2\x82\xac"},
		{"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
		{"\xff", "\uFFFD"}, {"\xfe", "\uFFFD"}, {"\xc0", "\uFFFD"}, {"\x80", "\uFFFD"},
	}
	for range 5000 {
		var b, want []byte
		for range r.IntN(12) {
			tk := tokens[r.IntN(len(tokens))]
			b, want = append(b, tk.in...), append(want, tk.want...)
		}
		got := string(appendValidUTF8([]byte("<"), b))
		if got != "<"+string(want) {
			t.Fatalf("%q: got %q, want %q", b, got, "<"+string(want))
		}
		if printableUTF8(b) != oldPrintableUTF8(b) {
			t.Fatalf("%q: printableUTF8 %v", b, printableUTF8(b))
		}
	}
}

func oldPrintableUTF8(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) && r != '\n' && r != '\t' && r != '\r' {
			return false
		}
	}
	return true
}
