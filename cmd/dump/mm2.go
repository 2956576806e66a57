package dump

import (
	"bytes"
	"fmt"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/scan"
)

// MirrorMaker 2's internal topics in dump (issue 23): text and json decode
// the records of offset-syncs, checkpoints, heartbeats and the Connect
// topics by the partition directory's name, as they do Kafka's internal
// topics (decoders.go); --no-decode-internal turns it off, and
// --output kafka never decodes them (kafka-dump-log has no such decoder).

// textMM2 renders a decoded MM2 record for text output:
//
//	OffsetSync key {"topic":"orders","partition":0} value {"upstreamOffset":42,"offset":17}
//	Checkpoint key {"group":"g","topic":"A.orders","partition":0} value v0 {…}
//	connector key "connector-mm2" value {"properties":{…}}
//	source-offset key ["MirrorSourceConnector",{…}] tombstone
func textMM2(st *ui.Styles, rv *scan.RecordView) string {
	d := rv.MM2
	if rv.MM2Err != nil {
		return st.Paint(st.Err, "undecodable "+ui.Esc(rv.MM2Topic)+" record: "+ui.Esc(rv.MM2Err.Error()))
	}
	var b bytes.Buffer
	b.WriteString(st.Paint(st.Title, d.TypeName()))
	// The JSON escapes C0 controls; esc the rest a terminal acts on (C1,
	// bidi controls) in keys and values that came from the data.
	b.WriteString(" key ")
	b.Write(ui.AppendEsc(nil, d.AppendKeyJSON(nil)))
	if d.Tombstone {
		b.WriteString(" tombstone")
		return b.String()
	}
	b.WriteString(" value ")
	if v, ok := d.ValueVersion(); ok {
		fmt.Fprintf(&b, "v%d ", v)
	}
	b.Write(ui.AppendEsc(nil, d.AppendValueJSON(nil)))
	if d.NewerVersion {
		b.WriteString(" (version other than 0: read with version 0's layout, as Kafka does)")
	}
	return b.String()
}

// writeMM2JSON writes the "decoded" object of a JSON record line for an
// MM2 topic (writeDecodedJSON).
func writeMM2JSON(j *ui.JSONWriter, rv *scan.RecordView) {
	d := rv.MM2
	writeDecodedJSON(j, rv.MM2Topic, rv.MM2Err, func(j *ui.JSONWriter) {
		j.Str("type", d.TypeName())
		j.Raw("key", d.AppendKeyJSON(nil))
		if d.Tombstone {
			j.Bool("tombstone", true)
			return
		}
		if v, ok := d.ValueVersion(); ok {
			j.Int("valueVersion", int64(v))
		}
		j.Raw("value", d.AppendValueJSON(nil))
		if d.NewerVersion {
			j.Bool("newerVersion", true)
		}
	})
}
