package decode

import (
	"bytes"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kseg/kseg/decode/decodetest/testkit"
)

// bigZstdBatch is a zstd batch of one record whose value is n bytes of
// zeros: a few KiB on disk, n decompressed.
func bigZstdBatch(t testing.TB, n int) Batch {
	t.Helper()
	raw, err := AppendBatch(nil, BatchSpec{Compression: CompressionZstd, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]RecordSpec{{Value: make([]byte, n)}})
	if err != nil {
		t.Fatal(err)
	}
	return testkit.Must(t, ParseBatch, raw)
}

// TestBudgetBoundsDecodersTogether: sixteen decoders sharing a Budget
// decode batches of 8 MiB at once and hold, together, about the budget,
// not sixteen batches (issue 28: a deep dump's memory grew with the
// cores, 256 MiB per decoding worker at the cap). Each decodes exactly
// what a decoder without a budget decodes, and a batch above the cap
// still fails with the cap's ErrTooLarge.
func TestBudgetBoundsDecodersTogether(t *testing.T) {
	const batch, limit, total, decoders = 8 << 20, 16 << 20, 16 << 20, 16
	b := bigZstdBatch(t, batch)
	var plain Decoder
	plain.MaxDecompressed = limit
	var want []byte
	if err := plain.Records(&b, func(r *Record) error { want = bytes.Clone(r.Value); return nil }); err != nil {
		t.Fatal(err)
	}
	plain = Decoder{}
	runtime.GC()
	base := testkit.HeapInuse()
	budget := NewBudget(total)
	var failed atomic.Int32
	heap := testkit.StartHeapSampler(time.Millisecond)
	var wg sync.WaitGroup
	for range decoders {
		wg.Go(func() {
			d := Decoder{MaxDecompressed: limit, Budget: budget}
			for range 3 {
				err := d.Records(&b, func(r *Record) error {
					if !bytes.Equal(r.Value, want) {
						failed.Add(1)
					}
					time.Sleep(5 * time.Millisecond) // rendering, the batch held
					return nil
				})
				if err != nil {
					failed.Add(1)
				}
				d.Release()
			}
		})
	}
	wg.Wait()
	peak := heap.Stop()
	if failed.Load() > 0 {
		t.Fatalf("%d decodes differ from the decoder without a budget", failed.Load())
	}
	// The budget, a BudgetBase buffer per decoder, and room for the
	// decoders' own state (zstd's, garbage of escalations not yet
	// collected). Measured as testkit.HeapInuse (live and unswept objects
	// plus the free slots of their spans, above the start): 24–40 MiB;
	// without the budget (Decoder.Budget nil), 122–130 MiB.
	bound := uint64(total + decoders*BudgetBase + 48<<20)
	peak -= min(peak, base)
	t.Logf("peak heap %d MiB above the start with %d decoders of %d MiB batches sharing %d MiB", peak>>20, decoders, batch>>20, total>>20)
	if peak > bound {
		t.Errorf("peak heap %d MiB above the start, want at most %d MiB", peak>>20, bound>>20)
	}
	if budget.free != budget.total {
		t.Errorf("%d bytes of the budget not given back", budget.total-budget.free)
	}

	// Above the cap: the cap's error, as without a budget.
	big := bigZstdBatch(t, limit+1)
	d := Decoder{MaxDecompressed: limit, Budget: budget}
	err := d.Records(&big, func(*Record) error { return nil })
	var plainErr error
	plainErr = (&Decoder{MaxDecompressed: limit}).Records(&big, func(*Record) error { return nil })
	if !errors.Is(err, ErrTooLarge) || err.Error() != plainErr.Error() {
		t.Errorf("above the cap: %v; without a budget: %v", err, plainErr)
	}
	d.Release()
}
