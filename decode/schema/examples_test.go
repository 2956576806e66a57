package schema_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/kseg/kseg/decode/schema"
	"github.com/kseg/kseg/decode/schema/schematest"
)

// TestExamplesRoundTrip: a record of every message of every internal topic
// at every version, written by schematest (a writer of its own, not
// schema.Encode) with every field set, tagged fields included, decodes
// completely and re-encodes to the same bytes, key and value, framing
// included; the consumer protocol inside GroupMetadataValue is decoded and
// re-encoded too.
func TestExamplesRoundTrip(t *testing.T) {
	seen := map[string]bool{}
	embedded := 0
	for _, topic := range schematest.Topics {
		exs, err := schematest.Examples(topic)
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range exs {
			what := fmt.Sprintf("%s %s v%d", topic, ex.Name, ex.Version)
			d, err := schema.DecodeInternal(topic, ex.Key, ex.Value)
			if err != nil {
				t.Errorf("%s: %v\nkey %x\nvalue %x", what, err, ex.Key, ex.Value)
				continue
			}
			if d.Unknown || d.NewerVersion || d.KeyTrailing != 0 || d.ValueTrailing != 0 {
				t.Errorf("%s: unknown %v, newer %v, trailing %d/%d", what, d.Unknown, d.NewerVersion, d.KeyTrailing, d.ValueTrailing)
				continue
			}
			if ex.Value == nil {
				if !d.Tombstone() {
					t.Errorf("%s: a null value is not a tombstone", what)
				}
				seen[topic+" "+ex.Name] = true
			} else {
				seen[fmt.Sprintf("%s %s v%d", topic, d.ValueMessage.Name, d.ValueVersion)] = true
			}
			k, v, err := d.Encode()
			if err != nil || !bytes.Equal(k, ex.Key) || !bytes.Equal(v, ex.Value) {
				t.Errorf("%s: round trip (%v)\nkey   %x\nwant  %x\nvalue %x\nwant  %x", what, err, k, ex.Key, v, ex.Value)
			}
			if ex.Name == "GroupMetadataValue" {
				for _, m := range d.Value.Structs("members") {
					for _, f := range []string{"subscription", "assignment"} {
						if e, _ := m.Get(f); e != nil {
							if em, ok := e.(*schema.Embedded); ok && em.Struct != nil {
								embedded++
								continue
							}
						}
						t.Errorf("%s: member %s not decoded", what, f)
					}
				}
			}
		}
	}
	// Every value (and metadata) message at every version, and a
	// tombstone for every coordinator key.
	for _, m := range schema.Messages() {
		switch {
		case m.Type == "coordinator-key":
			if !seen[m.Topic+" "+m.Name] {
				t.Errorf("no tombstone of %s", m.Name)
			}
		case m.Type == "coordinator-value" || m.Type == "metadata":
			for v := m.Valid.Lo; v <= m.Valid.Hi; v++ {
				if !seen[fmt.Sprintf("%s %s v%d", m.Topic, m.Name, v)] {
					t.Errorf("no example of %s v%d", m.Name, v)
				}
			}
		}
	}
	if embedded == 0 {
		t.Error("no consumer-protocol subscription decoded")
	}
	t.Logf("%d message versions and tombstones, %d embedded consumer-protocol messages", len(seen), embedded)
}

// BenchmarkDecodeInternal decodes a record of every message of every
// internal topic at every version (schematest.Examples): the generated
// reader's field-by-field reads, which replaying __consumer_offsets and
// __transaction_state (groups, txns) spends its time in.
func BenchmarkDecodeInternal(b *testing.B) {
	type example struct {
		topic      string
		key, value []byte
	}
	var all []example
	for _, topic := range schematest.Topics {
		exs, err := schematest.Examples(topic)
		if err != nil {
			b.Fatal(err)
		}
		for _, ex := range exs {
			all = append(all, example{topic, ex.Key, ex.Value})
		}
	}
	b.ResetTimer()
	for b.Loop() {
		for _, ex := range all {
			if _, err := schema.DecodeInternal(ex.topic, ex.key, ex.value); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(all)), "ns/record")
}
