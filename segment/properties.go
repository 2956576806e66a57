// meta.properties as java.util.Properties.load reads it: logical lines with
// their continuations, the separators, and the escapes.

package segment

import (
	"errors"
	"strconv"
	"strings"

	"github.com/kseg/kseg/decode"
)

// ReadMetaProperties reads meta.properties (MetaPropertiesEnsemble) as
// java.util.Properties#load does: ISO-8859-1, '#'/'!' comments, key and
// value separated by '=', ':' or whitespace, backslash escapes and line
// continuations.
func ReadMetaProperties(path string) (map[string]string, error) {
	b, err := ReadFileLimit(path, MaxTextFileBytes, "meta.properties")
	if err != nil {
		return nil, err
	}
	return parseProperties(b, path)
}

// ParseProperties decodes a Java properties file held in memory.
func ParseProperties(b []byte) (map[string]string, error) {
	return parseProperties(b, "")
}

func parseProperties(b []byte, path string) (map[string]string, error) {
	props := map[string]string{}
	lines := javaLines(b, 0)
	isWS := func(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }
	for i := 0; i < len(lines); i++ {
		pos := lines[i].pos
		line := strings.TrimLeftFunc(lines[i].text, func(r rune) bool { return r < 0x80 && isWS(byte(r)) })
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		// A line ending in an odd number of backslashes continues on the
		// next natural line, whose leading whitespace is dropped.
		for trailingBackslashes(line)%2 == 1 {
			line = line[:len(line)-1]
			if i+1 >= len(lines) {
				break
			}
			i++
			line += strings.TrimLeftFunc(lines[i].text, func(r rune) bool { return r < 0x80 && isWS(byte(r)) })
		}
		// The key ends at the first unescaped '=', ':' or whitespace.
		k := 0
		for k < len(line) {
			c := line[k]
			if c == '\\' {
				k += 2
				continue
			}
			if c == '=' || c == ':' || isWS(c) {
				break
			}
			k++
		}
		if k > len(line) {
			k = len(line)
		}
		v := k
		for v < len(line) && isWS(line[v]) {
			v++
		}
		if v < len(line) && (line[v] == '=' || line[v] == ':') {
			v++
		}
		for v < len(line) && isWS(line[v]) {
			v++
		}
		key, err := unescapeProperty(line[:k])
		if err != nil {
			return nil, fileCorrupt(path, pos, "key", decode.ErrCorrupt, "", "%v", err)
		}
		val, err := unescapeProperty(line[v:])
		if err != nil {
			field := key // the property's key names the field; "" is a valid key
			if field == "" {
				field = "value"
			}
			return nil, fileCorrupt(path, pos, field, decode.ErrCorrupt, "", "%v", err)
		}
		props[key] = val
	}
	return props, nil
}

func trailingBackslashes(s string) int {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	return n
}

// unescapeProperty is Properties#loadConvert, reading bytes as ISO-8859-1.
func unescapeProperty(s string) (string, error) {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			sb.WriteRune(rune(c)) // ISO-8859-1: byte value = code point
			continue
		}
		i++
		if i >= len(s) {
			break
		}
		switch c = s[i]; c {
		case 't':
			sb.WriteByte('\t')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 'f':
			sb.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", errors.New(`malformed \uxxxx encoding`)
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", errors.New(`malformed \uxxxx encoding`)
			}
			sb.WriteRune(rune(r))
			i += 4
		default:
			sb.WriteRune(rune(c))
		}
	}
	return sb.String(), nil
}
