package decode

import "testing"

// TestParseBatchAsKafka: FileLogInputStream reads an entry whose magic is
// above 2 as a DefaultRecordBatch; ParseBatch rejects it.
func TestParseBatchAsKafka(t *testing.T) {
	raw, err := AppendBatch(nil, BatchSpec{BaseOffset: 5, ProducerID: 7, ProducerEpoch: 1, BaseSequence: 3},
		[]RecordSpec{{Timestamp: 1700000000000, Key: []byte("k"), Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	raw[16] = 3 // the magic byte is not covered by the crc
	if _, err := ParseBatch(raw); err == nil {
		t.Fatal("ParseBatch accepted magic 3")
	}
	b, err := ParseBatchAsKafka(raw)
	if err != nil {
		t.Fatal(err)
	}
	if b.Magic != 3 || b.IsLegacy() || b.BaseOffset != 5 || b.ProducerID != 7 || b.BaseSequence != 3 || b.RecordCount != 1 || !b.CRCValid() {
		t.Fatalf("%+v", b)
	}
	var d Decoder
	n := 0
	if err := d.Records(&b, func(r *Record) error {
		n++
		if string(r.Key) != "k" || string(r.Value) != "v" || r.Offset != 5 {
			t.Errorf("record %+v", r)
		}
		return nil
	}); err != nil || n != 1 {
		t.Fatalf("%d records, %v", n, err)
	}
	raw[16] = 0xff // -1: neither reads it
	if _, err := ParseBatchAsKafka(raw); err == nil {
		t.Error("negative magic accepted")
	}
}
