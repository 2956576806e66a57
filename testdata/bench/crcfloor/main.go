// Command crcfloor is the floor kseg's batch-level dump is measured
// against: the least work that still checks a segment. It memory-maps each
// .log whole (syscall.Mmap, no read copies), walks the batch headers
// (baseOffset, batchLength, magic) and checks every CRC — CRC-32C over
// [attributes, end) for v2 batches, CRC-32 over [magic, end) for v0/v1
// messages — with hash/crc32, which uses the SSE4.2 / ARMv8 CRC
// instructions. It decodes nothing else, prints one line per file, and
// stops a file at the first entry that does not frame.
//
//	go run ./testdata/bench/crcfloor FILE.log|DIR...
package main

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"

	"github.com/kseg/kseg/testdata/bench/benchcmd"
	"github.com/kseg/kseg/testdata/bench/logfiles"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func main() {
	bad := 0
	benchcmd.Main("crcfloor", func() error {
		return logfiles.EachMapped(os.Args[1:], func(f string, data []byte) error {
			batches, mismatches := check(data)
			fmt.Printf("%s: %d batches, %d crc mismatches\n", f, batches, mismatches)
			bad += mismatches
			return nil
		})
	})
	if bad > 0 {
		os.Exit(3)
	}
}

func check(data []byte) (batches, mismatches int) {
	be := binary.BigEndian
	for p := 0; len(data)-p > 17; {
		n := int(be.Uint32(data[p+8:]))
		end := p + 12 + n
		if n < 14 || end > len(data) {
			break
		}
		var ok bool
		if data[p+16] >= 2 {
			ok = crc32.Checksum(data[p+21:end], castagnoli) == be.Uint32(data[p+17:])
		} else {
			ok = crc32.ChecksumIEEE(data[p+16:end]) == be.Uint32(data[p+12:])
		}
		if !ok {
			mismatches++
		}
		batches++
		p = end
	}
	return batches, mismatches
}
