package dump

import (
	"fmt"
	"strings"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/scan"
)

// How the printers say what dump's filters selected (the selection is
// the engine's: segment/scan/select.go).

// filterText names the filters given, for summaries: "--offsets 5:6
// --producer-id 9001".
func (o *Options) filterText() string {
	var parts []string
	if o.offsets != "" {
		parts = append(parts, "--offsets "+o.offsets)
	}
	if o.HasProducerFilter {
		parts = append(parts, fmt.Sprintf("--producer-id %d", o.ProducerID))
	}
	if o.ControlOnly {
		parts = append(parts, "--control-only")
	}
	return strings.Join(parts, " ")
}

// entriesSummary is the summary of a file of entries: "3 entries", or
// under a filter "1 of 3 entries selected".
func entriesSummary(o *Options, f scan.File) string {
	if !o.Filtered() {
		return ui.Plural(f.Entries, "entry")
	}
	return fmt.Sprintf("%d of %s selected", f.Selected, ui.Plural(f.Entries, "entry"))
}

// logSummaryText is the summary line of a .log in text and table: what it
// holds, or under a filter what was selected and then what was scanned.
func logSummaryText(o *Options, s *scan.LogSummary, st *ui.Styles) string {
	counts := func(m map[string]int64) string {
		var parts []string
		for _, k := range sortedKeys(m) {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
		return strings.Join(parts, ", ")
	}
	codecs, ctl := counts(s.Codecs), counts(s.ControlByType)
	// What was selected (or, unfiltered, what the file holds): batches,
	// records, offsets, control records.
	batches, first, last := s.Batches, s.FirstOffset, s.LastOffset
	line := ui.Plural(s.Batches, "batch")
	if o.Filtered() {
		batches, first, last = s.SelectedBatches, s.SelFirst, s.SelLast
		line = fmt.Sprintf("%d of %s selected", s.SelectedBatches, ui.Plural(s.Batches, "batch"))
	}
	if s.Records > 0 {
		line += ", " + ui.Plural(s.Records, "record")
	}
	if batches > 0 {
		line += fmt.Sprintf(", offsets %d..%d", first, last)
	}
	if !o.Filtered() && codecs != "" {
		line += ", codecs: " + codecs
	}
	if ctl != "" {
		line += ", control: " + ctl
	}
	if o.Filtered() {
		// Then what was scanned.
		line += "; scanned"
		if s.Batches > 0 {
			line += fmt.Sprintf(" offsets %d..%d,", s.FirstOffset, s.LastOffset)
		}
		if codecs != "" {
			line += " codecs: " + codecs + ","
		}
	} else {
		line += ","
	}
	line += fmt.Sprintf(" validBytes %d of %d, tail %s", s.Tail.ValidBytes, s.Tail.End, s.Tail.Kind)
	if s.CRCErrors > 0 {
		line += st.Paint(st.Err, ", "+ui.Plural(s.CRCErrors, "CRC error"))
	}
	return line
}
