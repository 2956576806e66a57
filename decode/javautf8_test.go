package decode

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// The expectations follow the JDK's String.decodeUTF8_UTF16 case by case.
func TestAppendJavaUTF8(t *testing.T) {
	const R = "\uFFFD"
	for _, c := range []struct {
		in   []byte
		want string
	}{
		{[]byte("plain"), "plain"},
		{[]byte{0xff, 0xfe, 'a'}, R + R + "a"},          // one per invalid lead byte
		{[]byte{0x80, 0x81}, R + R},                     // stray continuations
		{[]byte{0xc0, 0x80}, R + R},                     // C0/C1 never lead
		{[]byte{0xc3, 'x'}, R + "x"},                    // 2-byte lead, bad continuation
		{[]byte{0xe2, 0x82, 'A'}, R + "A"},              // malformed3 length 2
		{[]byte{0xe0, 0x80, 0x80}, R + R + R},           // overlong: malformed3 length 1
		{[]byte{0xed, 0xa0, 0x80}, R},                   // surrogate: one for three
		{[]byte{'a', 0xe2, 0x82}, "a" + R},              // truncated at the end: one, rest dropped
		{[]byte{'a', 0xe2, 'b'}, "a" + R + "b"},         // truncated, next byte not a continuation
		{[]byte{0xf0, 0x9f, 0x98, 'x'}, R + "x"},        // malformed4 length 3
		{[]byte{0xf5, 0x80, 0x80, 0x80}, R + R + R + R}, // above U+10FFFF
		{[]byte{0xf0, 0x9f, 0x98, 0x80}, "\U0001F600"},
		{[]byte{'a', 0xf0, 0x9f}, "a" + R},
		{[]byte{'a', 0xf0, 0x9f, 'z'}, "a" + R + "z"},
		{[]byte{0xe2, 0x82, 0xac}, "€"},
	} {
		got := AppendJavaUTF8(nil, c.in)
		if string(got) != c.want {
			t.Errorf("%x: got %q, want %q", c.in, got, c.want)
		}
		if !utf8.Valid(got) {
			t.Errorf("%x: output not valid UTF-8", c.in)
		}
	}
	if got := AppendJavaUTF8([]byte("k: "), []byte("v")); !bytes.Equal(got, []byte("k: v")) {
		t.Errorf("append: %q", got)
	}
}
