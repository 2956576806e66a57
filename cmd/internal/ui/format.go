package ui

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"text/template"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// --format: a Go text/template applied to every JSON object a command
// prints, as `docker ps --format`, `gh --template` and kubectl's `-o
// go-template` do. Every command with json output has it (finishTree adds
// the flag); the command runs with --output json and its stdout goes
// through a templateWriter, which decodes each object and prints the
// template's result for it, ended by a newline when the result is not
// empty and does not end with one (so a template that selects by .type
// prints nothing, not a blank line, for the other objects).
//
// The objects are the documented JSON objects (docs/json.md), keys as
// there: {{.group}}, {{.lag}}, {{range .members}}{{.clientId}}{{end}}.
// Integers stay integers (offsets and producer ids above 2^53 exactly;
// `gt .lag 1000` compares them), strings from data are escaped as in text
// output (esc) because the result goes to a terminal; -o json is the raw
// data. Functions besides text/template's own: json, join, upper, lower,
// time (epoch milliseconds as 2006-01-02T15:04:05.000Z), and dir, base
// (of a path).

// formatUsage is the --format flag's help line.
const formatUsage = "print each JSON object through a Go template, e.g. '{{.group}} {{.state}}' (docs/format.md); implies --output json"

// AddFormatFlags gives every command that prints json a --format flag.
func AddFormatFlags(c *cobra.Command) {
	out := c.Flags().Lookup("output")
	if out == nil || !strings.Contains(out.Usage, "json") || c.Flags().Lookup("format") != nil {
		return
	}
	c.Flags().String("format", "", formatUsage)
}

// templateFuncs are the functions a --format template may call.
var templateFuncs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"join": func(sep string, v any) (string, error) {
		list, ok := v.([]any)
		if !ok {
			if v == nil {
				return "", nil
			}
			return "", fmt.Errorf("join: %T is not a list", v)
		}
		parts := make([]string, len(list))
		for i, x := range list {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, sep), nil
	},
	"upper": strings.ToUpper,
	"lower": strings.ToLower,
	"time": func(v any) (string, error) {
		switch ms := v.(type) {
		case int64:
			return FmtTime(ms), nil
		case jsonNull:
			return "-", nil
		}
		return "", fmt.Errorf("time: %v is not epoch milliseconds", v)
	},
	"base": func(p string) string { return p[strings.LastIndexByte(p, '/')+1:] },
	"dir": func(p string) string {
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			return p[:i]
		}
		return "."
	},
}

// parseFormat parses a --format template (a usage error when it does not
// parse).
func parseFormat(text string) (*template.Template, error) {
	t, err := template.New("--format").Funcs(templateFuncs).Parse(unescapeText(text))
	if err != nil {
		return nil, UsageErrorf("--format: %v", err)
	}
	return t, nil
}

// unescapeText turns the \t and \n a shell passes literally inside single
// quotes into a tab and a newline, as docker does, so '{{.a}}\t{{.b}}'
// makes columns; inside an action ({{"\n"}}) they are the template's own
// string escapes and are left alone.
func unescapeText(text string) string {
	var b strings.Builder
	for text != "" {
		i := strings.Index(text, "{{")
		if i < 0 {
			i = len(text)
		}
		b.WriteString(strings.NewReplacer(`\t`, "\t", `\n`, "\n").Replace(text[:i]))
		text = text[i:]
		if text == "" {
			break
		}
		j := strings.Index(text, "}}")
		if j < 0 {
			j = len(text) - 2
		}
		b.WriteString(text[:j+2])
		text = text[j+2:]
	}
	return b.String()
}

// jsonNull is a JSON null as a template sees it: an empty string that the
// json function writes back as null.
type jsonNull string

func (jsonNull) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// templateWriter receives a command's JSON output and writes each
// object's template result to out.
type templateWriter struct {
	mu   sync.Mutex
	out  io.Writer
	t    *template.Template
	buf  []byte
	res  bytes.Buffer
	err  error
	objs int
	// firstType is the "type" of the first object, for the hint of an
	// error.
	firstType string
}

func newTemplateWriter(out io.Writer, t *template.Template) *templateWriter {
	return &templateWriter{out: out, t: t}
}

// Write takes JSON output in any pieces; every complete value is
// rendered as soon as its last line has arrived.
func (w *templateWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	w.buf = append(w.buf, p...)
	if i := bytes.LastIndexByte(w.buf, '\n'); i >= 0 {
		w.err = w.Render(false)
	}
	if w.err != nil {
		return 0, w.err
	}
	return len(p), nil
}

// Flush renders what is left; the command's output is over.
func (w *templateWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.err = w.Render(true)
	return w.err
}

// Render decodes and renders the complete values in buf, keeping an
// incomplete last one unless final.
func (w *templateWriter) Render(final bool) error {
	dec := json.NewDecoder(bytes.NewReader(w.buf))
	dec.UseNumber()
	used := int64(0)
	for {
		var v any
		err := dec.Decode(&v)
		if err == io.EOF {
			used = dec.InputOffset()
			break
		}
		if err != nil {
			if !final && errors.Is(err, io.ErrUnexpectedEOF) {
				break
			}
			return fmt.Errorf("--format: the command's output is not JSON: %v", err)
		}
		used = dec.InputOffset()
		w.objs++
		w.res.Reset()
		v = templateValue(v)
		typ := ""
		if m, ok := v.(map[string]any); ok {
			typ, _ = m["type"].(string)
		}
		if w.firstType == "" {
			w.firstType = typ
		}
		if err := w.t.Execute(&w.res, v); err != nil {
			if typ != "" {
				// A template written for one object type meets another
				// (a finding after the groups): say how to select.
				err = fmt.Errorf("%v (on a {\"type\":%q} object; a template for some objects only selects them: {{if eq .type %q}}…{{end}})", err, typ, cmp.Or(w.firstType, typ))
			}
			return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf("--format: %v", err)}
		}
		if n := w.res.Len(); n > 0 {
			if w.res.Bytes()[n-1] != '\n' {
				w.res.WriteByte('\n')
			}
			if _, err := w.out.Write(w.res.Bytes()); err != nil {
				return err
			}
		}
	}
	w.buf = append(w.buf[:0], w.buf[used:]...)
	return nil
}

// templateValue is a decoded JSON value as a template sees it: integers
// as int64 (float64 would print 1.5e+06 and round producer ids), other
// numbers as float64, strings escaped for the terminal, and null as an
// empty jsonNull (text/template prints a nil as "<no value>"; "" prints
// nothing and is false in {{if}}, as null is, and json writes it null).
func templateValue(v any) any {
	switch x := v.(type) {
	case nil:
		return jsonNull("")
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return u
		}
		f, _ := x.Float64()
		return f
	case string:
		return Esc(x)
	case []any:
		for i := range x {
			x[i] = templateValue(x[i])
		}
		return x
	case map[string]any:
		for k, e := range x {
			x[k] = templateValue(e)
		}
		return x
	}
	return v
}

// ApplyOutputFlags reads --output and --format before the command runs:
// -o wide is the table with every cell whole (and, where a command has
// them, its extra columns), and --format runs the command with -o json
// into a templateWriter.
func ApplyOutputFlags(c *cobra.Command, s *Streams) error {
	out := c.Flags().Lookup("output")
	if out == nil {
		return nil
	}
	if f := c.Flags().Lookup("format"); f != nil && f.Changed {
		if out.Changed && out.Value.String() != "json" {
			return UsageErrorf("--format prints the JSON objects through a template; it cannot be combined with --output %s", out.Value.String())
		}
		t, err := parseFormat(f.Value.String())
		if err != nil {
			return err
		}
		if err := out.Value.Set("json"); err != nil {
			return err
		}
		tw := newTemplateWriter(s.Out, t)
		s.Out, s.Format = tw, tw
		return nil
	}
	if out.Value.String() == "wide" && strings.Contains(out.Usage, "table") {
		if err := out.Value.Set("table"); err != nil {
			return err
		}
		s.Wide, s.Width = true, 0
	}
	return nil
}

// wideUsage rewrites an --output usage that offers table to offer wide.
func AddWideChoice(c *cobra.Command) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name == "output" && strings.Contains(f.Usage, "|table|") && !strings.Contains(f.Usage, "wide") {
			f.Usage = strings.Replace(f.Usage, "|table|", "|table|wide|", 1) + " (wide: the table with every cell whole)"
		}
	})
}
