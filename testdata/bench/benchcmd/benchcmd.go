// Package benchcmd is the plumbing the programs under testdata/bench
// share: how a program that fails says so, and how a size is written on
// their command lines.
package benchcmd

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Main runs run; when it fails, it prints "name: error" to stderr and
// exits 1 (an operational failure, as kseg's own exit code 1).
func Main(name string, run func() error) {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

// SizeFlag defines a flag of a size in bytes, written as ParseSize reads
// it; value is its default in the same form ("" for none, which reads 0).
// A size that does not parse is a usage error of flag.Parse.
func SizeFlag(name, value, usage string) *int64 {
	v := &sizeValue{n: new(int64)}
	if value != "" {
		if err := v.Set(value); err != nil {
			panic(err)
		}
	}
	flag.Var(v, name, usage)
	return v.n
}

// sizeValue is a SizeFlag's flag.Value: the size and how it was written.
type sizeValue struct {
	n    *int64
	text string
}

func (v *sizeValue) String() string { return v.text }

func (v *sizeValue) Set(s string) error {
	n, err := ParseSize(s)
	if err != nil {
		return err
	}
	*v.n, v.text = n, s
	return nil
}

// sizeUnits are the suffixes ParseSize reads, all powers of 1024, the
// longer before the shorter they end with.
var sizeUnits = []struct {
	suffix string
	mult   int64
}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}}

// ParseSize reads a positive size: 123, 64KiB, 512MiB, 4GiB, 1.5GiB
// (also K, M, G, KB, MB, GB as powers of 1024).
func ParseSize(s string) (int64, error) {
	num, mult := s, int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q", num)
	}
	return int64(n * float64(mult)), nil
}
