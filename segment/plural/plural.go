// Package plural counts nouns in English: "1 entry", "3 entries". Every
// count kseg prints — the CLI's and the domain packages' messages alike —
// goes through N, so that none says "1 groups" or "1 entries". It imports
// nothing, so that decode, segment, psm and barrier can all use it.
package plural

import (
	"strconv"
	"strings"
)

// N is n with the noun that agrees with it: "1 entry", "0 entries",
// "1 batch", "2 batches", "3 open transactions". noun is the singular;
// its last word takes the plural (Noun).
func N[T ~int | ~int8 | ~int16 | ~int32 | ~int64](n T, noun string) string {
	s := strconv.FormatInt(int64(n), 10) + " "
	if n == 1 {
		return s + noun
	}
	return s + Noun(noun)
}

// Noun is the plural of noun's last word by the regular English rules,
// which every noun kseg counts follows: "entry" → "entries", "batch" →
// "batches", "index" → "indexes", "partition" → "partitions". A word
// ending in "s" already ("bytes", "anomalies") is taken as plural.
func Noun(noun string) string {
	switch {
	case strings.HasSuffix(noun, "y") && len(noun) > 1 && !strings.ContainsRune("aeiou", rune(noun[len(noun)-2])):
		return noun[:len(noun)-1] + "ies"
	case strings.HasSuffix(noun, "x"), strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "sh"), strings.HasSuffix(noun, "ss"):
		return noun + "es"
	}
	return noun + "s"
}
