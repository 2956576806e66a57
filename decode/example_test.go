package decode_test

import (
	"fmt"
	"os"

	"github.com/kseg/kseg/decode"
)

// Walk the batches of a segment's bytes and name its transaction markers.
// decode knows bytes, not files: reading the file (and framing a file too
// large to hold in memory) is the segment package's job; here the whole
// .log of testdata/partitions/txn-0 fits in one slice.
func Example() {
	raw, err := os.ReadFile("../testdata/partitions/txn-0/00000000000000000000.log")
	if err != nil {
		fmt.Println(err)
		return
	}
	var d decode.Decoder // reused: decoding allocates nothing per batch
	for pos := 0; pos < len(raw); {
		b, err := decode.ParseBatch(raw[pos:])
		if err != nil {
			fmt.Println(err) // a *decode.CorruptError, positioned in raw[pos:]
			return
		}
		if !b.IsControl() {
			fmt.Printf("position %d: offsets %d..%d, producer %d, transactional %v, crc valid %v\n",
				pos, b.BaseOffset, b.LastOffset(), b.ProducerID, b.IsTransactional(), b.CRCValid())
		} else {
			// A control batch's meaning is its first record, read as
			// the broker reads it.
			r, err := d.FirstRecord(&b)
			if err != nil {
				fmt.Println(err)
				return
			}
			c, err := decode.ParseControl(r.Key, r.Value)
			if err != nil {
				fmt.Println(err)
				return
			}
			fmt.Printf("position %d: offset %d, %s marker of producer %d, coordinatorEpoch %d\n",
				pos, b.BaseOffset, c.Type, b.ProducerID, c.CoordinatorEpoch)
		}
		pos += int(b.Size())
	}
	// Output:
	// position 0: offsets 0..1, producer 2000, transactional true, crc valid true
	// position 127: offsets 2..4, producer 2001, transactional true, crc valid true
	// position 312: offsets 5..5, producer -1, transactional false, crc valid true
	// position 402: offsets 6..6, producer 2000, transactional true, crc valid true
	// position 496: offset 7, COMMIT marker of producer 2000, coordinatorEpoch 5
	// position 574: offsets 8..9, producer 2002, transactional true, crc valid true
	// position 705: offsets 10..10, producer 2001, transactional true, crc valid true
}

// A Cursor reads one structure and is checked once: the first failure
// sticks, named and positioned. Here an offsetDelta varint in six bytes,
// which Go's binary.Varint would accept and Kafka's ByteUtils.readVarint
// rejects.
func ExampleCursor() {
	c := decode.NewCursor([]byte{0x02, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 61)
	length := c.Varint("length")
	attributes := c.Int8("attributes")
	offsetDelta := c.Varint("offsetDelta")
	fmt.Println(length, attributes, offsetDelta)
	fmt.Println(c.Err())
	// Output:
	// 1 0 0
	// position 63: offsetDelta: corrupt: varint is too long, the most significant bit in the 5th byte is set
}
