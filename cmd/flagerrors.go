package cmd

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/cmd/internal/ui"
)

// Flag and argument errors in kseg's words. pflag says
// `invalid argument "abc" for "--producer-id" flag: strconv.ParseInt:
// parsing "abc": invalid syntax`, and cobra "accepts 2 arg(s), received
// 1": both name Go's internals, not what to type. flagError and argsError
// say what the flag or the command takes, with an example, and suggest the
// flag meant when one is misspelt (cobra suggests commands, not flags).

// flagError rewrites an error of flag parsing on c (the root's
// SetFlagErrorFunc). It is always a usage error.
func flagError(c *cobra.Command, err error) error {
	var iv *pflag.InvalidValueError
	var vr *pflag.ValueRequiredError
	var ne *pflag.NotExistError
	switch {
	case errors.As(err, &iv):
		if f := iv.GetFlag(); f != nil {
			err = fmt.Errorf("--%s %q: %s", f.Name, iv.GetValue(), wantValue(f, iv))
		}
	case errors.As(err, &vr):
		if f := vr.GetFlag(); f != nil {
			err = fmt.Errorf("--%s needs a value: %s", f.Name, valueForm(f))
		}
	case errors.As(err, &ne):
		if sug := flagSuggestions(c, ne.GetSpecifiedName(), ne.GetSpecifiedShortnames() != ""); len(sug) > 0 {
			err = fmt.Errorf("%w\n\nDid you mean this?\n\t%s", err, strings.Join(sug, "\n\t"))
		}
	}
	return &ui.ExitCodeError{Code: ui.ExitUsage, Err: err}
}

// wantValue says why v is not a value of f, and what is.
func wantValue(f *pflag.Flag, iv *pflag.InvalidValueError) string {
	if errors.Is(iv, strconv.ErrRange) {
		if lo, hi, ok := intRange(f.Value.Type()); ok {
			if strings.HasPrefix(iv.GetValue(), "-") {
				return fmt.Sprintf("too small: --%s takes at least %d", f.Name, lo)
			}
			return fmt.Sprintf("too large: --%s takes at most %d", f.Name, hi)
		}
	}
	form := valueForm(f)
	switch f.Value.Type() {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "not a whole number: " + form
	case "duration":
		return "not a duration: " + form
	case "bool":
		return "not true or false: " + form
	}
	return "not a valid value: " + form
}

// valueForm is what a value of f looks like, with an example.
func valueForm(f *pflag.Flag) string {
	ex := f.DefValue
	switch t := f.Value.Type(); t {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		_, hi, _ := intRange(t)
		if n, err := strconv.ParseInt(ex, 10, 64); err != nil || n <= 0 || n == hi {
			ex = "100"
		}
		s := fmt.Sprintf("write it in digits, e.g. --%s %s", f.Name, ex)
		if _, hi, ok := intRange(t); ok && hi < math.MaxInt64 {
			s += fmt.Sprintf(" (at most %d)", hi)
		}
		return s
	case "duration":
		return fmt.Sprintf("a number with a unit (ms, s, m, h), e.g. --%s 15m or 90s", f.Name)
	case "bool":
		return fmt.Sprintf("--%s or --%s=false", f.Name, f.Name)
	}
	if f.Usage != "" {
		return f.Usage
	}
	return "see --help"
}

// intRange is the range of pflag's integer type t.
func intRange(t string) (lo, hi int64, ok bool) {
	switch t {
	case "int8":
		return math.MinInt8, math.MaxInt8, true
	case "int16":
		return math.MinInt16, math.MaxInt16, true
	case "int32":
		return math.MinInt32, math.MaxInt32, true
	case "int", "int64":
		return math.MinInt64, math.MaxInt64, true
	case "uint8":
		return 0, math.MaxUint8, true
	case "uint16":
		return 0, math.MaxUint16, true
	case "uint32":
		return 0, math.MaxUint32, true
	}
	return 0, 0, false
}

// flagSuggestions are c's flags (its own and inherited, hidden ones left
// out) within two edits of name, or that name is a prefix of, as cobra
// suggests commands (SuggestionsMinimumDistance 2).
func flagSuggestions(c *cobra.Command, name string, shorthand bool) []string {
	if shorthand || name == "" {
		return nil
	}
	var out []string
	visit := func(f *pflag.Flag) {
		if f.Hidden || slices.Contains(out, "--"+f.Name) {
			return
		}
		if levenshtein(name, f.Name) <= 2 || len(name) >= 3 && strings.HasPrefix(f.Name, name) {
			out = append(out, "--"+f.Name)
		}
	}
	c.Flags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	slices.Sort(out)
	return out
}

// levenshtein is the edit distance between a and b.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// argsError rewrites cobra's argument-count errors ("accepts 2 arg(s),
// received 1") to say what c takes, from its Use line, and what it got.
func argsError(c *cobra.Command, args []string, err error) error {
	msg := err.Error()
	if !strings.Contains(msg, "arg(s)") {
		return err
	}
	want := strings.TrimSpace(strings.TrimPrefix(c.Use, c.Name()))
	got := "none"
	if len(args) > 0 {
		q := make([]string, len(args))
		for i, a := range args {
			q[i] = strconv.Quote(a)
		}
		got = ui.Plural(len(args), "argument") + ": " + strings.Join(q, " ")
	}
	return fmt.Errorf("%s takes %s; got %s", c.CommandPath(), want, got)
}
