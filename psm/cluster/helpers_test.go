package cluster_test

import (
	"strconv"

	"github.com/kseg/kseg/psm"
)

func psmDefaults() psm.Options { return psm.DefaultOptions() }

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
