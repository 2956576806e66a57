package mm2_test

import (
	"encoding/binary"
	"fmt"

	"github.com/kseg/kseg/decode/mm2"
)

// Decode one record of an offset-syncs topic, as OffsetSync.java writes
// it: the key is the upstream topic (int16 length, UTF-8) and partition,
// the value the upstream offset and the offset of its copy downstream.
func ExampleDecode() {
	topic := mm2.TopicOf("mm2-offset-syncs.B.internal-0")
	key := binary.BigEndian.AppendUint16(nil, 6)
	key = binary.BigEndian.AppendUint32(append(key, "orders"...), 0)
	value := binary.BigEndian.AppendUint64(nil, 4200)  // upstreamOffset
	value = binary.BigEndian.AppendUint64(value, 4107) // offset (downstream)

	r, err := mm2.Decode(topic.Kind, key, value)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(topic.Kind, "for cluster", topic.Alias)
	fmt.Println(r.TypeName(), string(r.AppendKeyJSON(nil)), string(r.AppendValueJSON(nil)))
	// Output:
	// offset-syncs for cluster B
	// OffsetSync {"topic":"orders","partition":0} {"upstreamOffset":4200,"offset":4107}
}
