package segment

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/kseg/kseg/decode"
)

// resyncLog builds a log of n small v2 batches and returns it with the
// batches' positions.
func resyncLog(t testing.TB, n int) ([]byte, []int64) {
	t.Helper()
	var log []byte
	var pos []int64
	for i := range n {
		b, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: int64(2 * i), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
			[]decode.RecordSpec{{OffsetDelta: 0, Timestamp: 1700000000000, Value: []byte("first")}, {OffsetDelta: 1, Timestamp: 1700000000001, Value: []byte("second")}})
		if err != nil {
			t.Fatal(err)
		}
		pos = append(pos, int64(len(log)))
		log = append(log, b...)
	}
	return log, pos
}

func TestResyncFindsNextBatch(t *testing.T) {
	log, pos := resyncLog(t, 6)
	for _, tc := range []struct {
		name   string
		damage func(b []byte)
	}{
		{"huge length", func(b []byte) { binary.BigEndian.PutUint32(b[pos[2]+8:], 0x7fffff00) }},
		{"negative length", func(b []byte) { binary.BigEndian.PutUint32(b[pos[2]+8:], 0xffffff00) }},
		{"bad magic", func(b []byte) { b[pos[2]+16] = 7 }},
		{"garbage over the header", func(b []byte) { copy(b[pos[2]:], bytes.Repeat([]byte{0xa5}, 40)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := bytes.Clone(log)
			tc.damage(b)
			// The last good batch ends at offset 3; the damaged one would
			// carry 4; the next real batch starts at pos[3] with offset 6.
			got, found, err := Resync(bytes.NewReader(b), pos[2]+1, int64(len(b)), ResyncOptions{MinBaseOffset: 4})
			if err != nil || !found || got != pos[3] {
				t.Fatalf("Resync = %d, %v, %v; want %d", got, found, err, pos[3])
			}
		})
	}
}

func TestResyncRespectsMinOffsetAndEnd(t *testing.T) {
	log, pos := resyncLog(t, 4)
	// Offsets 0..7: nothing at or above 100 exists.
	got, found, err := Resync(bytes.NewReader(log), 1, int64(len(log)), ResyncOptions{MinBaseOffset: 100})
	if err != nil || found || got != int64(len(log)) {
		t.Fatalf("Resync = %d, %v, %v", got, found, err)
	}
	// The batch at pos[3] does not fit before an end inside it.
	got, found, _ = Resync(bytes.NewReader(log), pos[2]+1, pos[3]+20, ResyncOptions{})
	if found {
		t.Fatalf("found a batch at %d that runs past the end", got)
	}
	// A whole entry at the very end of the range is found.
	got, found, _ = Resync(bytes.NewReader(log), pos[2]+1, int64(len(log)), ResyncOptions{})
	if !found || got != pos[3] {
		t.Fatalf("Resync = %d, %v; want %d", got, found, pos[3])
	}
}

func TestResyncLegacy(t *testing.T) {
	var c decode.Codecs
	var log []byte
	var pos []int64
	for i := range 3 {
		m, err := c.AppendLegacy(nil, decode.LegacySpec{Magic: 1, Offset: int64(i), Timestamp: 1700000000000, Value: []byte("legacy value")})
		if err != nil {
			t.Fatal(err)
		}
		pos = append(pos, int64(len(log)))
		log = append(log, m...)
	}
	log[pos[1]+8] = 0x7f
	got, found, err := Resync(bytes.NewReader(log), pos[1]+1, int64(len(log)), ResyncOptions{MinBaseOffset: 1})
	if err != nil || !found || got != pos[2] {
		t.Fatalf("Resync = %d, %v, %v; want %d", got, found, err, pos[2])
	}
	// A legacy CRC-32 mismatch is not a plausible start.
	log[len(log)-1] ^= 1
	if got, found, _ := Resync(bytes.NewReader(log), pos[1]+1, int64(len(log)), ResyncOptions{}); found {
		t.Fatalf("accepted a legacy message with a bad crc at %d", got)
	}
}

// TestResyncBoundedWork: random garbage, and garbage built to look like
// headers everywhere, are searched with a fixed amount of memory, and the
// CRC budget stops the adversarial case.
func TestResyncBoundedWork(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	garbage := make([]byte, 4<<20)
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	allocs := testing.AllocsPerRun(3, func() {
		if _, found, err := Resync(bytes.NewReader(garbage), 0, int64(len(garbage)), ResyncOptions{BufferSize: 64 << 10}); err != nil || found {
			t.Fatalf("found %v, err %v in random bytes", found, err)
		}
	})
	if allocs > 5 {
		t.Fatalf("%v allocations per search; want a constant few", allocs)
	}

	// Every position holds magic 2 and a plausible 1 MiB size: each one
	// would cost a megabyte of CRC.
	hostile := make([]byte, 8<<20)
	for p := 0; p+17 <= len(hostile); p += 17 {
		binary.BigEndian.PutUint32(hostile[p+8:], 1<<20)
		hostile[p+16] = 2
	}
	_, found, err := Resync(bytes.NewReader(hostile), 0, int64(len(hostile)), ResyncOptions{MaxCRCBytes: 16 << 20})
	if found || !errors.Is(err, ErrResyncBudget) {
		t.Fatalf("found %v, err %v; want the budget to run out", found, err)
	}
}

// TestResyncAcrossWindows: a batch that starts near a window boundary and
// runs through several windows is found and its CRC checked through the
// scratch buffer.
func TestResyncAcrossWindows(t *testing.T) {
	big := make([]byte, 300<<10)
	for i := range big {
		big[i] = byte(i * 7)
	}
	b, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: 50, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]decode.RecordSpec{{Timestamp: 1700000000000, Value: big}})
	if err != nil {
		t.Fatal(err)
	}
	lead := bytes.Repeat([]byte{0xff}, 4096+13)
	data := append(lead, b...)
	got, found, err := Resync(bytes.NewReader(data), 0, int64(len(data)), ResyncOptions{BufferSize: 4096})
	if err != nil || !found || got != int64(len(lead)) {
		t.Fatalf("Resync = %d, %v, %v; want %d", got, found, err, len(lead))
	}
	if crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)) != binary.BigEndian.Uint32(b[17:]) {
		t.Fatal("test batch has a bad crc")
	}
}

// FuzzResync: whatever the bytes, Resync terminates without panicking,
// stays within [from, end), and a position it returns holds an entry that
// frames, carries an offset at or above the minimum and passes its CRC.
func FuzzResync(f *testing.F) {
	log, pos := resyncLog(f, 4)
	f.Add(log, int64(1), int64(0))
	damaged := bytes.Clone(log)
	binary.BigEndian.PutUint32(damaged[pos[1]+8:], 0x7fffff00)
	f.Add(damaged, pos[1]+1, int64(2))
	f.Add(bytes.Repeat([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 61, 0, 0, 0, 0, 2}, 20), int64(0), int64(-5))
	f.Fuzz(func(t *testing.T, data []byte, from, min int64) {
		if from < 0 || from > int64(len(data)) {
			from = 0
		}
		p, found, err := Resync(bytes.NewReader(data), from, int64(len(data)), ResyncOptions{MinBaseOffset: min, BufferSize: 128})
		if err != nil && !errors.Is(err, ErrResyncBudget) {
			t.Fatalf("error on in-memory input: %v", err)
		}
		if !found {
			return
		}
		if p < from || p >= int64(len(data)) {
			t.Fatalf("position %d outside [%d, %d)", p, from, len(data))
		}
		b, err := decode.ParseBatch(data[p:])
		if b.Magic == 2 && err != nil {
			t.Fatalf("accepted a v2 entry at %d that does not parse: %v", p, err)
		}
		if int64(binary.BigEndian.Uint64(data[p:])) < min {
			t.Fatalf("accepted offset below %d", min)
		}
		size := int64(int32(binary.BigEndian.Uint32(data[p+8:])))
		raw := data[p : p+12+size]
		var ok bool
		if raw[16] == 2 {
			ok = crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)) == binary.BigEndian.Uint32(raw[17:])
		} else {
			ok = crc32.ChecksumIEEE(raw[16:]) == binary.BigEndian.Uint32(raw[12:])
		}
		if !ok {
			t.Fatalf("accepted an entry at %d whose crc does not match", p)
		}
	})
}
