package schema

import (
	"bufio"
	"bytes"
	"math/rand"
	"os"
	"strings"
	"testing"
)

// TestTableHoldsRelease checks the table against kafka_messages.txt, the
// list decode/schema/gen wrote from the Kafka tree the table was generated
// from: every definition of that tree is in the table with its topic,
// type, apiKey and versions, and the table holds nothing else. A table
// regenerated from another tree without its list (or edited by hand)
// fails here.
func TestTableHoldsRelease(t *testing.T) {
	f, err := os.Open("kafka_messages.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		w := strings.Fields(line)
		if len(w) != 6 {
			t.Fatalf("bad line %q", line)
		}
		topic, name, typ, apiKey, valid := w[0], w[1], w[2], w[3], w[4]
		m := Lookup(name)
		if m == nil {
			t.Errorf("%s (%s) is not in the table", name, w[5])
			continue
		}
		listed[name] = true
		if m.Topic != topic || m.Type != typ || itoa(int(m.APIKey)) != apiKey || versionString(m.Valid) != valid {
			t.Errorf("%s: table has %s %s apiKey %d versions %s, the release %s %s %s %s",
				name, m.Topic, m.Type, m.APIKey, versionString(m.Valid), topic, typ, apiKey, valid)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, m := range Messages() {
		if !listed[m.Name] {
			t.Errorf("%s is in the table but not in the release's list", m.Name)
		}
	}
	if len(listed) != 82 {
		t.Errorf("%d messages listed, docs/json.md says 82", len(listed))
	}
}

func itoa(v int) string {
	var b []byte
	if v < 0 {
		return "-" + itoa(-v)
	}
	for {
		b = append([]byte{byte('0' + v%10)}, b...)
		if v /= 10; v == 0 {
			return string(b)
		}
	}
}

// versionString renders a range as Kafka's validVersions does: "0", "0-2".
func versionString(r Versions) string {
	if r.Lo == r.Hi {
		return itoa(int(r.Lo))
	}
	if r.Hi == MaxVersion {
		return itoa(int(r.Lo)) + "+"
	}
	return itoa(int(r.Lo)) + "-" + itoa(int(r.Hi))
}

// TestNewerKafkaRecords: the records Kafka added after the 4.0 snapshot the
// table was first made from are known, decode through their topic's
// framing and round-trip byte for byte, their tagged fields included.
func TestNewerKafkaRecords(t *testing.T) {
	cases := []struct {
		topic, name string
		recordType  int16
		tagged      []string // tagged fields that must exist in the value
	}{
		{ClusterMetadata, "ClearElrRecord", 28, nil},
		{ConsumerOffsets, "ConsumerGroupRegularExpressionKey", 16, nil},
		{ConsumerOffsets, "StreamsGroupMetadataKey", 17, nil},
		{ConsumerOffsets, "StreamsGroupTopologyKey", 23, nil},
		{ConsumerOffsets, "StreamsGroupMemberMetadataKey", 19, nil},
		{ConsumerOffsets, "StreamsGroupTargetAssignmentMetadataKey", 20, nil},
		{ConsumerOffsets, "StreamsGroupTargetAssignmentMemberKey", 21, nil},
		{ConsumerOffsets, "StreamsGroupCurrentMemberAssignmentKey", 22, nil},
		{ConsumerOffsets, "ConsumerGroupMetadataKey", 3, []string{"MetadataHash", "CreationTimeMs"}},
		{ConsumerOffsets, "ShareGroupStatePartitionMetadataKey", 15, nil},
	}
	rnd := rand.New(rand.NewSource(28))
	for _, c := range cases {
		m := Lookup(c.name)
		if m == nil {
			t.Errorf("%s is not in the table", c.name)
			continue
		}
		var key, value []byte
		vm := m
		if Coordinator(c.topic) {
			if got := KeyFor(c.topic, c.recordType); got != m {
				t.Errorf("record type %d is %v, want %s", c.recordType, got, c.name)
				continue
			}
			vm = ValueFor(m)
			kb, err := Encode(m, gen(rnd, m.Fields, 0))
			if err != nil {
				t.Fatal(err)
			}
			key = append([]byte{byte(c.recordType >> 8), byte(c.recordType)}, kb...)
		} else if got := RecordFor(c.topic, c.recordType); got != m {
			t.Errorf("apiKey %d is %v, want %s", c.recordType, got, c.name)
			continue
		}
		for _, name := range c.tagged {
			found := false
			for _, f := range vm.Fields {
				found = found || (f.Name == name && !f.Tagged.Empty())
			}
			if !found {
				t.Errorf("%s has no tagged field %s", vm.Name, name)
			}
		}
		for v := vm.Valid.Lo; v <= vm.Valid.Hi; v++ {
			for i := 0; i < 20; i++ {
				vb, err := Encode(vm, gen(rnd, vm.Fields, v))
				if err != nil {
					t.Fatal(err)
				}
				if Coordinator(c.topic) {
					value = append([]byte{byte(v >> 8), byte(v)}, vb...)
				} else {
					value = append([]byte{1, byte(c.recordType), byte(v)}, vb...)
				}
				d, err := DecodeInternal(c.topic, key, value)
				if err != nil || d.Unknown || d.ValueMessage != vm {
					t.Fatalf("%s v%d: %+v, %v", vm.Name, v, d, err)
				}
				k2, v2, err := d.Encode()
				if err != nil || !bytes.Equal(k2, key) || !bytes.Equal(v2, value) {
					t.Fatalf("%s v%d: round trip (%v)\nkey %x / %x\nvalue %x / %x", vm.Name, v, err, k2, key, v2, value)
				}
			}
		}
	}
}
