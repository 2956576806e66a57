package ui

import (
	"bytes"
	"testing"
)

// --format: a template over every JSON object a command writes.

// TestTemplateWriterPieces: output arriving in any pieces (a byte at a
// time, an object split across writes, several in one) renders the same;
// an integer above 2^53 stays exact; strings are escaped.
func TestTemplateWriterPieces(t *testing.T) {
	in := `{"type":"a","id":9007199254740993,"name":"x\u001b[2J"}` + "\n" + `{"type":"b","id":-1,"f":1.5}` + "\n" + `{"type":"a","id":7}`
	tmpl, err := parseFormat(`{{.type}} {{.id}} {{.name}}{{.f}}`)
	if err != nil {
		t.Fatal(err)
	}
	// A key the object does not have prints text/template's <no value>.
	want := "a 9007199254740993 x\\x1b[2J<no value>\nb -1 <no value>1.5\na 7 <no value><no value>\n"
	for _, size := range []int{1, 3, 17, len(in)} {
		var out bytes.Buffer
		w := newTemplateWriter(&out, tmpl)
		for i := 0; i < len(in); i += size {
			if _, err := w.Write([]byte(in[i:min(i+size, len(in))])); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("pieces of %d: %q, want %q", size, out.String(), want)
		}
	}
}
