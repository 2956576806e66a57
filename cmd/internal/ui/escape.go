package ui

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Escaping what came from data (STYLE.md 18). Group, member and client ids,
// client hosts, protocol names, transactional ids, racks, config values,
// quota entities, ACL principals, header keys, unknown file names: a client
// or whoever wrote the files chose them, and a terminal obeys the control
// sequences in them. A crafted group id that clears the screen and draws
// "No findings" must reach the operator as text. Every text and table
// printer passes such strings through esc; JSON escapes them by itself
// (appendJSONString), and `dump -o kafka` prints what Kafka's
// DumpLogSegments prints, raw, byte for byte.
//
// The escapes are those git's quote_path and GNU ls's escape style use,
// readable and unambiguous per byte:
//
//   - C0 controls and DEL as \xNN (\x1b for ESC), except \t, \n and \r,
//     which read better as themselves escaped;
//   - C1 controls (U+0080..U+009F; U+009B is a one-character CSI to many
//     terminals) and the Unicode bidirectional controls (U+202A..U+202E,
//     U+2066..U+2069, U+200E, U+200F, U+061C: "Trojan Source" reordering)
//     as \uNNNN;
//   - a byte that is not part of valid UTF-8 as \xNN.
//
// A backslash is left as it is, so esc is idempotent (printers and the
// Table renderer may both apply it) and an ACL principal DOMAIN\user reads
// as written; the JSON output is exact where a backslash matters.

// Esc returns s with every character a terminal could act on escaped. A
// string with none (nearly all) is returned as it is, without allocating.
func Esc(s string) string {
	i := cleanPrefix(s)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !needsEscape(r, n) {
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		switch {
		case r == utf8.RuneError && n <= 1:
			appendByteEscape(&b, s[i])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80:
			appendByteEscape(&b, byte(r))
		default:
			b.WriteString(`\u`)
			h := strconv.FormatInt(int64(r), 16)
			b.WriteString(strings.Repeat("0", 4-len(h)))
			b.WriteString(h)
		}
		i += max(n, 1)
	}
	return b.String()
}

// AppendEsc appends esc(b) to dst; clean bytes (nearly all) are copied
// without a conversion to string (dump prints a record's header keys).
func AppendEsc(dst, b []byte) []byte {
	if cleanPrefix(b) < len(b) {
		return append(dst, Esc(string(b))...)
	}
	return append(dst, b...)
}

// cleanPrefix is how many leading bytes of s are shown as they are: all of
// them (len(s)) for nearly every string. Printable ASCII is passed over a
// byte at a time, without decoding.
func cleanPrefix[S ~string | ~[]byte](s S) int {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if r, n := decodeRune(s[i:]); !needsEscape(r, n) {
			i += n
			continue
		}
		break
	}
	return i
}

// needsEscape reports whether the rune r, n bytes long in the input, is
// shown escaped.
func needsEscape(r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n <= 1: // invalid UTF-8
		return true
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f: // C0, DEL, C1
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

func appendByteEscape(b *strings.Builder, c byte) {
	const hex = "0123456789abcdef"
	b.WriteString(`\x`)
	b.WriteByte(hex[c>>4])
	b.WriteByte(hex[c&0xf])
}

// EscMessage is esc for a diagnostic (an error, a warning) that may name
// a file or an id from the data: its own line breaks and tabs (cobra's
// "Did you mean this?\n\t…") are kept, everything else escaped.
func EscMessage(s string) string {
	if Esc(s) == s {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		parts := strings.Split(l, "\t")
		for k, p := range parts {
			parts[k] = Esc(p)
		}
		lines[i] = strings.Join(parts, "\t")
	}
	return strings.Join(lines, "\n")
}

// escAll escapes every string of ss in place and returns it.
func escAll(ss []string) []string {
	for i, s := range ss {
		ss[i] = Esc(s)
	}
	return ss
}
