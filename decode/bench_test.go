package decode_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment/segtest"
)

// Hot-path benchmarks on realistic batches (segtest.LargeSegment: tiny
// metrics records, JSON events with headers, 100 KiB blobs), one codec at
// a time. Run with
//
//	go test ./decode -run '^$' -bench . -benchmem
//
// Bytes per second are of the batches as stored (compressed).

// benchBatches returns about size bytes of batches of one codec (control
// batches left out), each parsed.
func benchBatches(tb testing.TB, codec decode.Compression, size int64) []decode.Batch {
	tb.Helper()
	var buf bytes.Buffer
	if _, err := segtest.LargeSegment(&buf, size, segtest.LargeOptions{Codecs: []decode.Compression{codec}, Seed: 3}); err != nil {
		tb.Fatal(err)
	}
	log := buf.Bytes()
	var out []decode.Batch
	for p := 0; p < len(log); {
		b, err := decode.ParseBatch(log[p:])
		if err != nil {
			tb.Fatal(err)
		}
		p += int(b.Size())
		if !b.IsControl() {
			out = append(out, b)
		}
	}
	return out
}

func totalBytes(bs []decode.Batch) int64 {
	var n int64
	for i := range bs {
		n += int64(len(bs[i].Raw))
	}
	return n
}

var codecs = []decode.Compression{decode.CompressionNone, decode.CompressionGzip, decode.CompressionSnappy, decode.CompressionLZ4, decode.CompressionZstd}

// benchEachBatch times fn over every batch, reporting the bytes of the
// batches as stored and the allocations.
func benchEachBatch(b *testing.B, batches []decode.Batch, fn func(*decode.Batch) error) {
	b.SetBytes(totalBytes(batches))
	b.ReportAllocs()
	for b.Loop() {
		for i := range batches {
			if err := fn(&batches[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRecords decodes every record of every batch (Decoder.Records),
// decompression included.
func BenchmarkRecords(b *testing.B) {
	for _, codec := range codecs {
		b.Run(codec.String(), func(b *testing.B) {
			var d decode.Decoder
			var records int64
			fn := func(r *decode.Record) error { records++; return nil }
			benchEachBatch(b, benchBatches(b, codec, 8<<20), func(bt *decode.Batch) error { return d.Records(bt, fn) })
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(records), "ns/record")
		})
	}
}

// BenchmarkCRC checks the CRC-32C of every batch (Batch.CRCValid).
func BenchmarkCRC(b *testing.B) {
	benchEachBatch(b, benchBatches(b, decode.CompressionNone, 8<<20), func(bt *decode.Batch) error {
		if !bt.CRCValid() {
			return errors.New("crc mismatch")
		}
		return nil
	})
}

// BenchmarkParseBatch parses every batch header (what the scanner does per
// batch, without the I/O).
func BenchmarkParseBatch(b *testing.B) {
	benchEachBatch(b, benchBatches(b, decode.CompressionZstd, 8<<20), func(bt *decode.Batch) error {
		_, err := decode.ParseBatch(bt.Raw)
		return err
	})
}

// TestRecordsDoNotAllocate: once its buffers have grown, a Decoder
// decodes a batch, compressed or not, without allocating at all.
func TestRecordsDoNotAllocate(t *testing.T) {
	for _, codec := range codecs {
		t.Run(codec.String(), func(t *testing.T) {
			batches := benchBatches(t, codec, 1<<20)
			// The batch with the most records.
			best := 0
			for i := range batches {
				if batches[i].RecordCount > batches[best].RecordCount {
					best = i
				}
			}
			b := &batches[best]
			var d decode.Decoder
			var n int
			fn := func(r *decode.Record) error { n += len(r.Headers); return nil }
			if err := d.Records(b, fn); err != nil { // warm-up: buffers grow
				t.Fatal(err)
			}
			allocs := testing.AllocsPerRun(20, func() {
				if err := d.Records(b, fn); err != nil {
					t.Fatal(err)
				}
			})
			perRecord := allocs / float64(b.RecordCount)
			t.Logf("%s: %d records, %.2f allocations per batch", codec, b.RecordCount, allocs)
			if allocs >= 0.5 || perRecord > 0.001 {
				t.Errorf("%s: %.2f allocations decoding a batch of %d records, want none per record", codec, allocs, b.RecordCount)
			}
		})
	}
}

// Example-sized check that the benchmark data is what it claims: every
// codec present, records with headers, large records.
func TestBenchBatchesRealistic(t *testing.T) {
	batches := benchBatches(t, decode.CompressionZstd, 2<<20)
	var d decode.Decoder
	var headers, large, tiny int
	for i := range batches {
		if batches[i].Compression() != decode.CompressionZstd {
			t.Fatalf("batch %d: %s", i, batches[i].Compression())
		}
		err := d.Records(&batches[i], func(r *decode.Record) error {
			headers += len(r.Headers)
			switch {
			case len(r.Value) >= 100<<10:
				large++
			case r.Value != nil && len(r.Value) < 100:
				tiny++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if headers == 0 || large == 0 || tiny == 0 {
		t.Errorf("headers %d, large records %d, tiny records %d: want some of each", headers, large, tiny)
	}
}
