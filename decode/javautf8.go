package decode

import "unicode/utf8"

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
	const repl = "\uFFFD"
	notCont := func(c byte) bool { return c&0xc0 != 0x80 }
	sl := len(b)
	for sp := 0; sp < sl; {
		b1 := b[sp]
		sp++
		switch {
		case b1 < 0x80:
			dst = append(dst, b1)
		case b1>>5 == 0x6 && b1&0x1e != 0: // C2..DF
			if sp < sl {
				b2 := b[sp]
				sp++
				if notCont(b2) {
					dst = append(dst, repl...)
					sp--
				} else {
					dst = append(dst, b1, b2)
				}
				continue
			}
			return append(dst, repl...)
		case b1>>4 == 0xe: // E0..EF
			if sp+1 < sl {
				b2, b3 := b[sp], b[sp+1]
				sp += 2
				if (b1 == 0xe0 && b2&0xe0 == 0x80) || notCont(b2) || notCont(b3) {
					dst = append(dst, repl...)
					sp -= 3
					// malformed3
					if (b1 == 0xe0 && b2&0xe0 == 0x80) || notCont(b2) {
						sp++
					} else {
						sp += 2
					}
				} else if b1 == 0xed && b2 >= 0xa0 { // a UTF-16 surrogate
					dst = append(dst, repl...)
				} else {
					dst = append(dst, b1, b2, b3)
				}
				continue
			}
			if sp < sl && ((b1 == 0xe0 && b[sp]&0xe0 == 0x80) || notCont(b[sp])) {
				dst = append(dst, repl...)
				continue
			}
			return append(dst, repl...)
		case b1>>3 == 0x1e: // F0..F7
			if sp+2 < sl {
				b2, b3, b4 := b[sp], b[sp+1], b[sp+2]
				sp += 3
				uc := rune(b1&0x07)<<18 | rune(b2&0x3f)<<12 | rune(b3&0x3f)<<6 | rune(b4&0x3f)
				if notCont(b2) || notCont(b3) || notCont(b4) || uc < 0x10000 || uc > 0x10ffff {
					dst = append(dst, repl...)
					sp -= 4
					// malformed4
					switch {
					case b1 > 0xf4 || (b1 == 0xf0 && (b2 < 0x90 || b2 > 0xbf)) || (b1 == 0xf4 && b2&0xf0 != 0x80) || notCont(b2):
						sp++
					case notCont(b3):
						sp += 2
					default:
						sp += 3
					}
				} else {
					dst = append(dst, b1, b2, b3, b4)
				}
				continue
			}
			if b1 > 0xf4 || (sp < sl && ((b1 == 0xf0 && (b[sp] < 0x90 || b[sp] > 0xbf)) ||
				(b1 == 0xf4 && b[sp]&0xf0 != 0x80) || notCont(b[sp]))) {
				dst = append(dst, repl...)
				continue
			}
			sp++
			dst = append(dst, repl...)
			if sp < sl && notCont(b[sp]) {
				continue
			}
			return dst
		default:
			dst = append(dst, repl...)
		}
	}
	return dst
}
