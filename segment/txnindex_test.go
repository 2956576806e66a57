package segment

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
)

// formats.md §12: pid 1000, first 100, last 150, LSO 120.
const txnVector = "000000000000000003e8000000000000006400000000000000960000000000000078"

func TestTxnIndexVector(t *testing.T) {
	want := AbortedTxn{Version: 0, ProducerID: 1000, FirstOffset: 100, LastOffset: 150, LastStableOffset: 120}
	b := testkit.MustHex(t, txnVector)
	if got := AppendAbortedTxn(nil, want); string(got) != string(b) {
		t.Fatalf("AppendAbortedTxn = %x, want %s", got, txnVector)
	}
	x, err := ParseTxnIndex(b, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Entries) != 1 || x.Entries[0] != want || x.TrailingBytes != 0 || x.Length != 34 {
		t.Errorf("parsed %+v", x)
	}
	if s := want.String(); s != "AbortedTxn(version=0, producerId=1000, firstOffset=100, lastOffset=150, lastStableOffset=120)" {
		t.Errorf("String() = %q", s)
	}
	if err := SanityCheckTxnIndex(&x, 100); err != nil {
		t.Errorf("sanity base 100: %v", err)
	}
	if err := SanityCheckTxnIndex(&x, 150); err != nil {
		t.Errorf("sanity base 150 (lastOffset == base is fine): %v", err)
	}
}

func TestTxnIndexMultipleAndTrailing(t *testing.T) {
	a := AbortedTxn{ProducerID: 1, FirstOffset: 10, LastOffset: 20, LastStableOffset: 10}
	c := AbortedTxn{ProducerID: 2, FirstOffset: 15, LastOffset: 30, LastStableOffset: 31}
	b := AppendAbortedTxn(AppendAbortedTxn(nil, a), c)
	b = append(b, 0, 0, 0, 0, 0, 0, 0) // a torn third entry: ignored, reported
	x, err := ParseTxnIndex(b, "t.txnindex")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(x.Entries, []AbortedTxn{a, c}) || x.TrailingBytes != 7 || x.Path != "t.txnindex" {
		t.Errorf("parsed %+v", x)
	}
	// Second entry's lastOffset 30 < base 25? no; base 25 fails on the first (20).
	err = SanityCheckTxnIndex(&x, 25)
	wantCorrupt(t, err, "lastOffset", 18, decode.ErrCorrupt)
	msg, _ := decode.KafkaMessage(err)
	abs, _ := filepath.Abs("t.txnindex")
	want := "Last offset of aborted transaction AbortedTxn(version=0, producerId=1, firstOffset=10, lastOffset=20, lastStableOffset=10) in index " + abs + " is less than start offset 25"
	if msg != want {
		t.Errorf("Kafka message\n got %q\nwant %q", msg, want)
	}
	// Fewer than 34 bytes: no entries, all trailing.
	x, err = ParseTxnIndex(b[:33], "")
	if err != nil || len(x.Entries) != 0 || x.TrailingBytes != 33 {
		t.Errorf("short: %+v %v", x, err)
	}
	x, err = ParseTxnIndex(nil, "")
	if err != nil || len(x.Entries) != 0 || x.TrailingBytes != 0 {
		t.Errorf("empty: %+v %v", x, err)
	}
}

func TestTxnIndexVersionQuirk(t *testing.T) {
	ok := AbortedTxn{ProducerID: 7, FirstOffset: 1, LastOffset: 2, LastStableOffset: 3}
	// Low byte set: Kafka reads only the high byte (buffer.get(0)), so this
	// is version 0 to Kafka and accepted.
	low := ok
	low.Version = 0x0005
	// High byte 0xff: version -1 to Kafka, not > 0, accepted too.
	neg := ok
	neg.Version = -256 // 0xff00
	b := AppendAbortedTxn(AppendAbortedTxn(nil, low), neg)
	x, err := ParseTxnIndex(b, "")
	if err != nil {
		t.Fatalf("quirky versions rejected: %v", err)
	}
	if x.Entries[0].KafkaVersion() != 0 || x.Entries[1].KafkaVersion() != -1 || x.Entries[0].Version != 5 {
		t.Errorf("versions %+v", x.Entries)
	}
	if got := AppendAbortedTxn(AppendAbortedTxn(nil, x.Entries[0]), x.Entries[1]); string(got) != string(b) {
		t.Error("re-encoding does not preserve the stored version bytes")
	}
	// High byte 1: version 1 > 0, rejected at the second entry.
	bad := ok
	bad.Version = 0x0100
	b = AppendAbortedTxn(AppendAbortedTxn(nil, ok), bad)
	x, err = ParseTxnIndex(b, "00000000000000000000.txnindex")
	ce := wantCorrupt(t, err, "version", 34, decode.ErrUnsupported)
	if ce.Path != "00000000000000000000.txnindex" || len(x.Entries) != 1 {
		t.Errorf("path %q, entries before failure %d", ce.Path, len(x.Entries))
	}
	msg, _ := decode.KafkaMessage(err)
	if !strings.HasPrefix(msg, "Unexpected aborted transaction version 1 in transaction index ") || !strings.HasSuffix(msg, "00000000000000000000.txnindex, current version is 0") {
		t.Errorf("Kafka message = %q", msg)
	}
}

func TestReadTxnIndex(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "00000000000000000100.txnindex")
	if err := os.WriteFile(p, testkit.MustHex(t, txnVector), 0o644); err != nil {
		t.Fatal(err)
	}
	x, err := ReadTxnIndex(p)
	if err != nil || len(x.Entries) != 1 || x.Entries[0].ProducerID != 1000 || x.Path != p {
		t.Errorf("ReadTxnIndex = %+v, %v", x, err)
	}
	if _, err := ReadTxnIndex(filepath.Join(dir, "missing.txnindex")); !os.IsNotExist(err) {
		t.Errorf("missing: %v", err)
	}
}
