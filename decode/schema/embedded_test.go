package schema

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestEmbeddedEncodesFromTree: a GroupMetadataValue member's subscription
// and assignment are re-encoded from their decoded trees, not copied from
// the stored bytes, so a round trip checks the consumer protocol's
// decoding (ConsumerProtocolSubscription/Assignment) field by field; bytes
// after the message, which ConsumerProtocol ignores, are kept.
func TestEmbeddedEncodesFromTree(t *testing.T) {
	be16 := func(v int) []byte { return binary.BigEndian.AppendUint16(nil, uint16(v)) }
	be32 := func(v int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
	str := func(s string) []byte { return append(be16(len(s)), s...) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	// Subscription v1 (topics, userData, ownedPartitions) and two stray
	// bytes after it; assignment v0.
	sub := cat(be16(1), be32(1), str("foo"), be32(-1), be32(1), str("foo"), be32(1), be32(0), []byte{0xca, 0xfe})
	asg := cat(be16(0), be32(1), str("foo"), be32(1), be32(0), be32(-1))
	// GroupMetadataValue v3 (not flexible): one member.
	value := cat(be16(3), str("consumer"), be32(7), str("range"), str("m"), be64(5), be32(1),
		str("m"), be16(0xffff), str("c"), str("h"), be32(1000), be32(100),
		be32(len(sub)), sub, be32(len(asg)), asg)
	key := cat(be16(2), str("g"))
	d, err := DecodeInternal(ConsumerOffsets, key, value)
	if err != nil {
		t.Fatal(err)
	}
	m := d.Value.Structs("members")[0]
	se, ok := m.Get("subscription")
	emb, _ := se.(*Embedded)
	if !ok || emb == nil || emb.Struct == nil {
		t.Fatalf("subscription not decoded: %#v", se)
	}
	if _, v, err := d.Encode(); err != nil || !bytes.Equal(v, value) {
		t.Fatalf("round trip (%v)\n got %x\nwant %x", err, v, value)
	}
	// Change the decoded topic: the encoding must follow the tree.
	topics, _ := emb.Struct.Get("topics")
	topics.([]any)[0] = "bar"
	_, v, err := d.Encode()
	if err != nil {
		t.Fatal(err)
	}
	d2, err := DecodeInternal(ConsumerOffsets, key, v)
	if err != nil {
		t.Fatal(err)
	}
	se2, _ := d2.Value.Structs("members")[0].Get("subscription")
	if got := se2.(*Embedded).Struct.KafkaJSON(); !bytes.Contains([]byte(got), []byte(`"topics":["bar"]`)) {
		t.Errorf("re-encoded subscription: %s", got)
	}
	if raw := se2.(*Embedded).Raw; !bytes.HasSuffix(raw, []byte{0xca, 0xfe}) {
		t.Errorf("bytes after the subscription lost: %x", raw)
	}
}

func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
