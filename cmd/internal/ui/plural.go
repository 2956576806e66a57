package ui

import english "github.com/kseg/kseg/segment/plural"

// Plural is n with the noun that agrees with it ("1 entry", "3 entries"):
// segment/plural, the one helper every package counts with.
func Plural[N ~int | ~int32 | ~int64](n N, noun string) string { return english.N(n, noun) }
