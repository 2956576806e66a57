package mm2

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/schema"
)

// ConnectRecord is one record of a Connect topic. Connect writes its
// values with JsonConverter (schemas disabled for its internal topics) and
// Jackson's compact output; Value holds the value compacted, which for
// Connect's own records is the stored bytes.
type ConnectRecord struct {
	// Type is what the key says the record is. Configs topic
	// (KafkaConfigBackingStore): connector, task, commit, target-state,
	// tasks-fencing, session-key, restart-connector, logger-cluster.
	// Status topic (KafkaStatusBackingStore): connector-status,
	// task-status, topic-status. Offsets topic: source-offset. "unknown"
	// for a key none of these.
	Type string
	// Name is what the key names after its prefix: the connector, the
	// task (<connector>-<n>), the logger namespace; for an offset, the
	// connector.
	Name string
	// Key is the key as stored; KeyJSON when it is JSON (the offsets
	// topic's ["<connector>",{<partition>}]), else a string.
	Key     []byte
	KeyJSON bool
	// Value is the value, compacted; nil for a tombstone.
	Value []byte
}

// connectPrefixes are the configs and status topics' key prefixes, from
// KafkaConfigBackingStore and KafkaStatusBackingStore (longer prefixes
// first where one starts another).
var connectPrefixes = map[Kind][]struct{ prefix, typ string }{
	ConnectConfigs: {
		{"target-state-", "target-state"},
		{"connector-", "connector"},
		{"tasks-fencing-", "tasks-fencing"},
		{"task-", "task"},
		{"commit-", "commit"},
		{"restart-connector-", "restart-connector"},
		{"logger-cluster-", "logger-cluster"},
	},
	ConnectStatus: {
		{"status-connector-", "connector-status"},
		{"status-task-", "task-status"},
		{"status-topic-", "topic-status"},
	},
}

func decodeConnect(kind Kind, key, value []byte) (*ConnectRecord, error) {
	c := &ConnectRecord{Type: "unknown", Key: key}
	if key == nil {
		return c, &decode.CorruptError{BaseOffset: decode.NoBaseOffset, Field: "key",
			Err: fmt.Errorf("%w: record has no key", decode.ErrCorrupt)}
	}
	if kind == ConnectOffsets {
		c.Type, c.KeyJSON = "source-offset", true
		k, err := compactJSON("key", key)
		if err != nil {
			return c, err
		}
		c.Key = k
		// ["<connector>",{partition}] (ConnectorOffsetBackingStore,
		// OffsetUtils.processPartitionKey): the connector is the first
		// element.
		var parts []json.RawMessage
		if json.Unmarshal(k, &parts) == nil && len(parts) == 2 {
			_ = json.Unmarshal(parts[0], &c.Name)
		}
	} else {
		s := string(key)
		if kind == ConnectConfigs && s == "session-key" {
			c.Type = "session-key"
		}
		for _, p := range connectPrefixes[kind] {
			if name, ok := strings.CutPrefix(s, p.prefix); ok {
				c.Type, c.Name = p.typ, name
				break
			}
		}
	}
	if value == nil {
		return c, nil
	}
	v, err := compactJSON("value", value)
	c.Value = v
	return c, err
}

// compactJSON validates b as JSON (and UTF-8, which Jackson requires) and
// returns it without insignificant whitespace; string escapes and number
// literals are kept as they are.
func compactJSON(part string, b []byte) ([]byte, error) {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		pos := int64(0)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			pos = max(se.Offset-1, 0)
		}
		return nil, &decode.CorruptError{Pos: pos, BaseOffset: decode.NoBaseOffset, Field: part,
			Err: &wireError{class: decode.ErrCorrupt, msg: "not JSON: " + err.Error()}}
	}
	if !utf8.Valid(b) {
		return nil, &decode.CorruptError{Pos: int64(invalidUTF8At(b)), BaseOffset: decode.NoBaseOffset, Field: part,
			Err: &wireError{class: decode.ErrCorrupt, msg: "not JSON: invalid UTF-8"}}
	}
	return out.Bytes(), nil
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

func (c *ConnectRecord) encode() (key, value []byte, err error) {
	return c.Key, c.Value, nil
}

func (c *ConnectRecord) appendKeyJSON(b []byte) []byte {
	if c.KeyJSON {
		return append(b, c.Key...)
	}
	return append(b, schema.JSONString(string(c.Key))...)
}
