package cmd

import (
	"strconv"
	"strings"
)

// plural is n with the noun that agrees with it: "1 entry", "0 entries",
// "1 batch", "2 batches", "3 open transactions". Every count kseg prints
// goes through it, so that no message says "1 groups" or "1 entries".
// noun is the singular; the last word takes the English plural
// (pluralNoun).
func plural[N ~int | ~int32 | ~int64](n N, noun string) string {
	s := strconv.FormatInt(int64(n), 10) + " "
	if n == 1 {
		return s + noun
	}
	return s + pluralNoun(noun)
}

// pluralNoun is the plural of noun's last word by the regular English
// rules, which every noun kseg counts follows: "entry" → "entries",
// "batch" → "batches", "index" → "indexes", "partition" → "partitions".
func pluralNoun(noun string) string {
	switch {
	case strings.HasSuffix(noun, "y") && len(noun) > 1 && !strings.ContainsRune("aeiou", rune(noun[len(noun)-2])):
		return noun[:len(noun)-1] + "ies"
	case strings.HasSuffix(noun, "s"), strings.HasSuffix(noun, "x"), strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "sh"):
		return noun + "es"
	}
	return noun + "s"
}
