package digest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// fixtureDirs are the bundled partitions and the broken ones.
func fixtureDirs(t testing.TB) []string {
	t.Helper()
	a, _ := filepath.Glob("../../testdata/partitions/*-0")
	b, _ := filepath.Glob("../../testdata/broken/*/*-0")
	if len(a) == 0 || len(b) == 0 {
		t.Fatal("no bundled partitions under testdata/")
	}
	return append(a, b...)
}

func write(t testing.TB, dir string, o Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if o.Now.IsZero() {
		o.Now = time.UnixMilli(1767225600000)
	}
	if o.Version == "" {
		o.Version = "test"
	}
	if _, err := Write(&buf, dir, o); err != nil {
		t.Fatalf("digest %s: %v", dir, err)
	}
	return buf.Bytes()
}

func openBytes(t testing.TB, b []byte) (*Digest, error) {
	t.Helper()
	return OpenReaderAt(bytes.NewReader(b), int64(len(b)), "test.digest")
}

// seen is one batch as a scan of the directory or of the digest gives it.
type seen struct {
	b     decode.Batch
	pos   int64
	valid bool
	crc   uint32
	hash  []byte
}

// dirBatches scans every segment of dir as the digest writer does.
func dirBatches(t testing.TB, dir string, h Hash) ([][]seen, []segment.Tail) {
	t.Helper()
	pd, err := segment.OpenPartitionDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]seen
	var tails []segment.Tail
	for _, s := range pd.Segments {
		if s.Log == "" {
			continue
		}
		lf, err := segment.OpenLog(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		sc := lf.CRCScanner(segment.ScanOptions{}, true)
		var v []seen
		for sc.Next() {
			b := *sc.Batch()
			raw := append([]byte(nil), b.Raw...)
			b.Raw = nil
			v = append(v, seen{b: b, pos: sc.Pos(), valid: sc.CRCValid(), crc: (&decode.Batch{Magic: b.Magic, Raw: raw}).ComputeCRC(), hash: h.Sum(nil, Covered(raw))})
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		tails = append(tails, sc.Tail())
		sc.Close()
		lf.Close()
		out = append(out, v)
	}
	return out, tails
}

func digestBatches(t testing.TB, d *Digest) ([][]seen, []segment.Tail) {
	t.Helper()
	var out [][]seen
	var tails []segment.Tail
	for i := 0; i < d.Segments(); i++ {
		sc := d.Scan(i)
		var v []seen
		for sc.Next() {
			b := *sc.Batch()
			if b.Raw != nil && (b.Size() != int64(len(b.Raw))) {
				t.Fatalf("segment %d: batch at %d: %d raw bytes, size %d", i, b.BaseOffset, len(b.Raw), b.Size())
			}
			b.Raw = nil
			v = append(v, seen{b: b, pos: sc.Pos(), valid: sc.CRCValid(), crc: sc.Entry().ComputedCRC, hash: append([]byte(nil), sc.Hash()...)})
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		tails = append(tails, sc.Tail())
		out = append(out, v)
	}
	return out, tails
}

func sameTails(a, b []segment.Tail) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Kind != y.Kind || x.ValidBytes != y.ValidBytes || x.End != y.End || (x.Err == nil) != (y.Err == nil) {
			return false
		}
		if x.Err != nil && (x.Err.Error() != y.Err.Error() || !sameClass(x.Err, y.Err)) {
			return false
		}
	}
	return true
}

func sameClass(a error, b error) bool {
	for _, c := range classes[1:] {
		if errors.Is(a, c) != errors.Is(b, c) {
			return false
		}
	}
	return true
}

// TestRoundTrip: every batch of every bundled partition (healthy,
// legacy, compacted, transactional, damaged) reads back from its digest
// with every header field, its position, its CRC verdict and computed
// CRC, and the hash of its bytes; every segment's tail, the snapshots and
// the log end too. With either hash.
func TestRoundTrip(t *testing.T) {
	for _, dir := range fixtureDirs(t) {
		for _, h := range []Hash{XXH3, SHA256} {
			t.Run(filepath.Base(filepath.Dir(dir))+"/"+filepath.Base(dir)+"/"+h.String(), func(t *testing.T) {
				raw := write(t, dir, Options{Hash: h, From: -1})
				d, err := openBytes(t, raw)
				if err != nil {
					t.Fatal(err)
				}
				want, wantTails := dirBatches(t, dir, h)
				got, gotTails := digestBatches(t, d)
				if !reflect.DeepEqual(want, got) {
					t.Fatalf("batches differ:\ndir    %+v\ndigest %+v", want, got)
				}
				if !sameTails(wantTails, gotTails) {
					t.Fatalf("tails differ:\ndir    %+v\ndigest %+v", wantTails, gotTails)
				}
				info := d.Info()
				pd, _ := segment.OpenPartitionDir(dir)
				if len(info.Snapshots) != len(pd.Snapshots) {
					t.Fatalf("%d snapshots, want %d", len(info.Snapshots), len(pd.Snapshots))
				}
				for i, s := range pd.Snapshots {
					b, _ := os.ReadFile(s.Path)
					if info.Snapshots[i].Offset != s.Offset || !bytes.Equal(info.Snapshots[i].Content, b) {
						t.Errorf("snapshot %d differs", s.Offset)
					}
				}
				if info.Topic != pd.Topic || info.Partition != pd.Partition || info.Hash != h || info.From != -1 {
					t.Errorf("info %+v", info)
				}
			})
		}
	}
}
