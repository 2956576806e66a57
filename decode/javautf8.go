package decode

import (
	"strings"
	"unicode/utf8"
)

// javaReplacement is U+FFFD, what the JDK's decoder writes for a malformed
// sequence.
const javaReplacement = "\uFFFD"

// AppendJavaUTF8 appends b decoded as Java's new String(bytes, UTF_8) does
// and re-encoded as UTF-8, which is what kafka-dump-log's StringDecoder
// prints and what Kafka's generated readers hold for a string field:
// malformed input becomes U+FFFD by the JDK's rules (String.decodeUTF8_UTF16
// with its malformed3/malformed4 lengths), which is one U+FFFD per invalid
// byte for most binary data but one per truncated or surrogate-encoding
// sequence (E2 82 41 → U+FFFD 'A'; ED A0 80 → one U+FFFD), and at the very
// end of the input drops the rest of a truncated sequence after its U+FFFD.
// Valid input is copied as is.
func AppendJavaUTF8(dst, b []byte) []byte {
	if utf8.Valid(b) {
		return append(dst, b...)
	}
	for sp := 0; sp < len(b); {
		b1 := b[sp]
		sp++
		end := false
		switch {
		case b1 < 0x80:
			dst = append(dst, b1)
		case b1>>5 == 0x6 && b1&0x1e != 0: // C2..DF
			dst, sp, end = javaUTF8Two(dst, b, b1, sp)
		case b1>>4 == 0xe: // E0..EF
			dst, sp, end = javaUTF8Three(dst, b, b1, sp)
		case b1>>3 == 0x1e: // F0..F7
			dst, sp, end = javaUTF8Four(dst, b, b1, sp)
		default:
			dst = append(dst, javaReplacement...)
		}
		if end {
			return dst
		}
	}
	return dst
}

// notCont reports whether c is not a UTF-8 continuation byte (10xxxxxx).
func notCont(c byte) bool { return c&0xc0 != 0x80 }

// javaUTF8Two decodes a two-byte sequence whose lead b1 was read at sp-1.
// It returns the position after it and whether the input ended inside it
// (the JDK then stops with one U+FFFD).
func javaUTF8Two(dst, b []byte, b1 byte, sp int) ([]byte, int, bool) {
	if sp >= len(b) {
		return append(dst, javaReplacement...), sp, true
	}
	b2 := b[sp]
	if notCont(b2) {
		return append(dst, javaReplacement...), sp, false
	}
	return append(dst, b1, b2), sp + 1, false
}

// javaUTF8Three decodes a three-byte sequence, rejecting overlong forms
// (E0 80..9F) and UTF-16 surrogates (ED A0..BF) as the JDK does; a
// malformed sequence skips malformed3's length.
func javaUTF8Three(dst, b []byte, b1 byte, sp int) ([]byte, int, bool) {
	sl := len(b)
	if sp+1 < sl {
		b2, b3 := b[sp], b[sp+1]
		switch {
		case (b1 == 0xe0 && b2&0xe0 == 0x80) || notCont(b2):
			return append(dst, javaReplacement...), sp, false // malformed3: the lead alone
		case notCont(b3):
			return append(dst, javaReplacement...), sp + 1, false // malformed3: lead and b2
		case b1 == 0xed && b2 >= 0xa0: // a UTF-16 surrogate
			return append(dst, javaReplacement...), sp + 2, false
		}
		return append(dst, b1, b2, b3), sp + 2, false
	}
	if sp < sl && ((b1 == 0xe0 && b[sp]&0xe0 == 0x80) || notCont(b[sp])) {
		return append(dst, javaReplacement...), sp, false
	}
	return append(dst, javaReplacement...), sp, true
}

// javaUTF8Four decodes a four-byte sequence, rejecting code points outside
// U+10000..U+10FFFF; a malformed sequence skips malformed4's length, and a
// truncated one at the end of the input may skip one byte more before the
// JDK stops.
func javaUTF8Four(dst, b []byte, b1 byte, sp int) ([]byte, int, bool) {
	sl := len(b)
	if sp+2 < sl {
		b2, b3, b4 := b[sp], b[sp+1], b[sp+2]
		uc := rune(b1&0x07)<<18 | rune(b2&0x3f)<<12 | rune(b3&0x3f)<<6 | rune(b4&0x3f)
		if !notCont(b2) && !notCont(b3) && !notCont(b4) && uc >= 0x10000 && uc <= 0x10ffff {
			return append(dst, b1, b2, b3, b4), sp + 3, false
		}
		dst = append(dst, javaReplacement...)
		switch { // malformed4
		case b1 > 0xf4 || (b1 == 0xf0 && (b2 < 0x90 || b2 > 0xbf)) || (b1 == 0xf4 && b2&0xf0 != 0x80) || notCont(b2):
			return dst, sp, false
		case notCont(b3):
			return dst, sp + 1, false
		}
		return dst, sp + 2, false
	}
	if b1 > 0xf4 || (sp < sl && ((b1 == 0xf0 && (b[sp] < 0x90 || b[sp] > 0xbf)) ||
		(b1 == 0xf4 && b[sp]&0xf0 != 0x80) || notCont(b[sp]))) {
		return append(dst, javaReplacement...), sp, false
	}
	sp++
	dst = append(dst, javaReplacement...)
	return dst, sp, !(sp < sl && notCont(b[sp]))
}

// JSONString quotes s as Jackson writes a JSON string: '"' and '\\'
// escaped, \b \t \n \f \r, other control characters as \u00XX, everything
// else as is. Kafka reads the string with new String(bytes, UTF_8), which
// turns malformed bytes into U+FFFD by the JDK's rules (AppendJavaUTF8).
// strconv.Quote would emit Go escapes (\a, \x00) that are not JSON. The
// control records' values and decode/schema's messages are both written
// with it.
func JSONString(s string) string {
	if !utf8.ValidString(s) {
		s = string(AppendJavaUTF8(nil, []byte(s)))
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 {
				const hex = "0123456789ABCDEF"
				b.WriteString(`\u00`)
				b.WriteByte(hex[r>>4])
				b.WriteByte(hex[r&0xf])
				continue
			}
			b.WriteRune(r) // utf8.RuneError for malformed bytes
		}
	}
	b.WriteByte('"')
	return b.String()
}
