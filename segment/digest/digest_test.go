package digest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
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
	for s := range pd.Logs() {
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

// readAll opens b and reads every batch of every segment.
func readAll(b []byte) error {
	d, err := OpenReaderAt(bytes.NewReader(b), int64(len(b)), "test.digest")
	if err != nil {
		return err
	}
	for i := 0; i < d.Segments(); i++ {
		sc := d.Scan(i)
		for sc.Next() {
			_ = sc.Hash()
		}
		if err := sc.Err(); err != nil {
			return err
		}
	}
	return nil
}

// TestEveryByteMatters: a digest with any one byte changed (but the kseg
// version in its header, free text) or cut short anywhere does not read:
// the error is a *FormatError at a byte of the file.
func TestEveryByteMatters(t *testing.T) {
	t.Parallel()
	b := write(t, "../../testdata/partitions/orders-0", Options{From: -1})
	if err := readAll(b); err != nil {
		t.Fatal(err)
	}
	nl := bytes.IndexByte(b, '\n')
	version := bytes.LastIndex(b[:nl], []byte(" ")) + 1
	check := func(what string, g []byte) {
		t.Helper()
		err := readAll(g)
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Pos < 0 || fe.Pos > int64(len(g)) {
			t.Fatalf("%s: %v, want a *FormatError within the %d bytes", what, err, len(g))
		}
	}
	for i := range b {
		if i >= version && i < nl {
			continue
		}
		g := bytes.Clone(b)
		g[i] ^= 1 << (i % 8)
		check("byte "+strconv.Itoa(i)+" changed", g)
	}
	for n := range len(b) {
		check("cut at "+strconv.Itoa(n), b[:n])
	}
}

// TestFutureVersion: a format this kseg does not read is said as such,
// at the version's byte, whatever follows.
func TestFutureVersion(t *testing.T) {
	b := write(t, "../../testdata/partitions/orders-0", Options{From: -1})
	g := append([]byte("kseg-digest 12 blake9 kseg v9.0.0\n"), b[10:20]...)
	_, err := openBytes(t, g)
	var fe *FormatError
	if !errors.As(err, &fe) || !errors.Is(err, ErrVersion) || fe.Pos != 12 || !strings.Contains(err.Error(), "version 12") {
		t.Fatalf("%v", err)
	}
}

// TestIncremental: a whole digest followed by a section continuing from
// any offset (below the log start, inside a batch, at a segment's base, at
// the log end, beyond it) reads as the whole digest does; so do three
// sections; a section of another partition, or after a gap, does not.
func TestIncremental(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"../../testdata/partitions/orders-0", "../../testdata/partitions/txn-0", "../../testdata/broken/torn-tail/events-0"} {
		whole := write(t, dir, Options{From: -1})
		d, err := openBytes(t, whole)
		if err != nil {
			t.Fatal(err)
		}
		want, wantTails := digestBatches(t, d)
		end := d.Info().LogEnd
		for from := int64(0); from <= end+1; from++ {
			cont := write(t, dir, Options{From: from})
			for _, b := range [][]byte{append(bytes.Clone(whole), cont...), append(append(bytes.Clone(whole), cont...), write(t, dir, Options{From: from / 2})...)} {
				m, err := openBytes(t, b)
				if err != nil {
					t.Fatalf("%s --from %d: %v", dir, from, err)
				}
				got, gotTails := digestBatches(t, m)
				if !reflect.DeepEqual(want, got) || !sameTails(wantTails, gotTails) {
					t.Fatalf("%s --from %d: the sections read otherwise than the whole digest:\n%+v\n%+v", dir, from, want, got)
				}
				if m.Info().LogEnd != end {
					t.Fatalf("log end %d, want %d", m.Info().LogEnd, end)
				}
			}
		}
	}
	// A continuation of another partition.
	a := write(t, "../../testdata/partitions/orders-0", Options{From: -1})
	b := write(t, "../../testdata/partitions/txn-0", Options{From: 3})
	if _, err := openBytes(t, append(a, b...)); !errors.Is(err, ErrContinuation) {
		t.Errorf("another partition: %v", err)
	}
	// A section alone, from an offset: a log that starts there.
	d, err := openBytes(t, write(t, "../../testdata/partitions/orders-0", Options{From: 30}))
	if err != nil || d.Info().Start < 30 || d.Info().From != 30 {
		t.Fatalf("%v %+v", err, d.Info())
	}
}

// TestLive: a live partition's torn last segment is an append in flight,
// left out; the digest ends at the last whole batch.
func TestLive(t *testing.T) {
	dir := "../../testdata/broken/torn-tail/events-0"
	var buf bytes.Buffer
	sum, err := Write(&buf, dir, Options{From: -1, Live: true})
	if err != nil {
		t.Fatal(err)
	}
	d, err := openBytes(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	_, tails := digestBatches(t, d)
	if sum.InFlight == 0 || tails[len(tails)-1].Kind != segment.TailClean || !d.Info().Live {
		t.Fatalf("in flight %d, tail %+v, live %v", sum.InFlight, tails[len(tails)-1], d.Info().Live)
	}
}

// TestLocateChange: a byte changed anywhere in a batch's records is found
// from the other batch's CRC and hash alone; two bytes changed are not
// found (never wrongly).
func TestLocateChange(t *testing.T) {
	lf := segtest.OpenLog(t, "../../testdata/partitions/orders-0/00000000000000000000.log")
	sc := lf.Scanner(segment.ScanOptions{})
	defer sc.Close()
	n := 0
	for sc.Next() && n < 6 {
		n++
		raw := bytes.Clone(sc.Batch().Raw)
		for _, h := range []Hash{XXH3, SHA256} {
			sum := h.Sum(nil, Covered(raw))
			crc := decode.CRC32C(raw[21:])
			for i := 61; i < len(raw); i++ {
				for _, v := range []byte{0x01, 0x80, 0xff} {
					g := bytes.Clone(raw)
					g[i] ^= v
					if j, ok := LocateChange(g, crc, sum, h); !ok || j != i {
						t.Fatalf("batch %d: byte %d ^ %#x located at %d, %v", n, i, v, j, ok)
					}
				}
			}
			if len(raw) > 70 {
				g := bytes.Clone(raw)
				g[62] ^= 1
				g[len(g)-1] ^= 1
				if j, ok := LocateChange(g, crc, sum, h); ok {
					t.Fatalf("two bytes changed: located at %d", j)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no batch")
	}
}
