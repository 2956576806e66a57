package schema_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/schema"
	"github.com/kseg/kseg/decode/schema/schematest"
)

// checkNoCrash decodes key/value as a record of topic, as dump does for
// every record of an internal-topic partition: whatever the bytes, the
// result is a record, an unknown type or an error, never a panic. An error
// is a *decode.CorruptError of one class, naming the key or the value
// (and the field in it), at a position inside that part; what decodes
// renders and re-encodes to bytes that decode to the same JSON.
func checkNoCrash(t *testing.T, topic string, key, value []byte) {
	d, err := schema.DecodeInternal(topic, key, value)
	if err != nil {
		ce, ok := decode.AsCorrupt(err)
		if !ok {
			t.Fatalf("%s: %T is not a *decode.CorruptError: %v", topic, err, err)
		}
		part := value
		if ce.Field == "key" || strings.HasPrefix(ce.Field, "key.") {
			part = key
		} else if ce.Field != "value" && !strings.HasPrefix(ce.Field, "value.") {
			t.Fatalf("%s: error names neither key nor value: %q (%v)", topic, ce.Field, err)
		}
		if ce.Pos < 0 || ce.Pos > int64(len(part)) {
			t.Fatalf("%s: error position %d outside 0..%d (%v)", topic, ce.Pos, len(part), err)
		}
		n := 0
		for _, class := range []error{decode.ErrCorrupt, decode.ErrCRCMismatch, decode.ErrTruncated, decode.ErrTooLarge, decode.ErrUnsupported} {
			if errors.Is(err, class) {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%s: error wraps %d classes: %v", topic, n, err)
		}
		return
	}
	if d.Unknown {
		return
	}
	_ = d.TypeName()
	_, _, _ = d.RemoteLogMetadataString()
	var js string
	if d.Key != nil {
		js = d.Key.KafkaJSON()
	}
	if d.Value != nil {
		js += d.Value.KafkaJSON()
	}
	k, v, err := d.Encode()
	if err != nil {
		t.Fatalf("%s: decoded but does not encode: %v\nkey %x\nvalue %x", topic, err, key, value)
	}
	d2, err := schema.DecodeInternal(topic, k, v)
	if err != nil {
		t.Fatalf("%s: re-encoded bytes do not decode: %v\nkey %x\nvalue %x", topic, err, k, v)
	}
	var js2 string
	if d2.Key != nil {
		js2 = d2.Key.KafkaJSON()
	}
	if d2.Value != nil {
		js2 += d2.Value.KafkaJSON()
	}
	if js != js2 {
		t.Fatalf("%s: JSON changed by a round trip\n%s\n%s", topic, js, js2)
	}
}

// TestDamagedExamplesNeverCrash cuts and flips bytes of every generated
// record of every internal topic: unknown types, bad versions, lengths
// past the end and garbage decode as unknown or as an error, never as a
// crash (issue 13: "unknown ones shown as such, never as a crash").
func TestDamagedExamplesNeverCrash(t *testing.T) {
	for _, topic := range schematest.Topics {
		exs, err := schematest.Examples(topic)
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range exs {
			for _, part := range []int{0, 1} {
				src := ex.Key
				if part == 1 {
					src = ex.Value
				}
				for i := 0; i < len(src); i++ {
					cut := bytes.Clone(src[:i])
					flip := bytes.Clone(src)
					flip[i] ^= 0xff
					for _, b := range [][]byte{cut, flip} {
						if part == 0 {
							checkNoCrash(t, topic, b, ex.Value)
						} else {
							checkNoCrash(t, topic, ex.Key, b)
						}
					}
				}
			}
		}
	}
}

// FuzzDecodeInternal: go test ./decode/schema -run '^$' -fuzz FuzzDecodeInternal
func FuzzDecodeInternal(f *testing.F) {
	for ti, topic := range schematest.Topics {
		exs, _ := schematest.Examples(topic)
		for _, ex := range exs {
			f.Add(uint8(ti), ex.Key, ex.Value)
		}
	}
	f.Fuzz(func(t *testing.T, ti uint8, key, value []byte) {
		checkNoCrash(t, schematest.Topics[int(ti)%len(schematest.Topics)], key, value)
	})
}
