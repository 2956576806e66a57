package ui

import (
	"strconv"
	"time"
)

// How single values read in text and table output, the same in every
// command: timestamps in UTC with milliseconds, absent values as "-".

// FmtTime is an epoch-milliseconds timestamp (a batch's maxTimestamp, a
// commit's commitTimestamp …) as 2006-01-02T15:04:05.000Z; "-" for a
// negative one (Kafka's NO_TIMESTAMP is -1).
func FmtTime(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// I64 is v in decimal, for a table cell.
func I64(v int64) string { return strconv.FormatInt(v, 10) }

// OrDash is v in decimal, or "-" when it is negative (absent: Kafka's -1).
func OrDash(v int64) string {
	if v < 0 {
		return "-"
	}
	return strconv.FormatInt(v, 10)
}

// OrDashString is s, or "-" when it is empty.
func OrDashString(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
