package schema_test

import (
	"encoding/binary"
	"fmt"

	"github.com/kseg/kseg/decode/schema"
)

// Decode one record of __consumer_offsets: an offset commit of group
// "billing" for orders-0, as CoordinatorRecordSerde frames it (an int16
// record type before the key, an int16 version before the value), and
// read it back by field name or as Kafka's JSON converter prints it.
func ExampleDecodeInternal() {
	str := func(b []byte, s string) []byte { return append(binary.BigEndian.AppendUint16(b, uint16(len(s))), s...) }
	key := binary.BigEndian.AppendUint16(nil, 1) // OffsetCommitKey
	key = str(str(key, "billing"), "orders")
	key = binary.BigEndian.AppendUint32(key, 0)                 // partition
	value := binary.BigEndian.AppendUint16(nil, 3)              // OffsetCommitValue v3
	value = binary.BigEndian.AppendUint64(value, 12)            // offset
	value = binary.BigEndian.AppendUint32(value, 0)             // leaderEpoch
	value = str(value, "")                                      // metadata
	value = binary.BigEndian.AppendUint64(value, 1700000101000) // commitTimestamp

	d, err := schema.DecodeInternal("__consumer_offsets", key, value)
	if err != nil {
		fmt.Println(err)
		return
	}
	group, _ := d.Key.String("group")
	offset, _ := d.Value.Int("offset")
	fmt.Println(d.TypeName(), group, offset)
	fmt.Println(d.Key.KafkaJSON())
	fmt.Println(d.Value.KafkaJSON())
	// Output:
	// OffsetCommit billing 12
	// {"group":"billing","topic":"orders","partition":0}
	// {"offset":12,"leaderEpoch":0,"metadata":"","commitTimestamp":1700000101000}
}
