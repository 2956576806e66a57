package mm2

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/kseg/kseg/decode"
)

var fuzzKinds = []Kind{OffsetSyncs, Checkpoints, Heartbeats, ConnectConfigs, ConnectOffsets, ConnectStatus}

// FuzzDecode: a key and a value of any MM2 topic. Oracles: a record or a
// positioned error, never a panic; the error names the key or the value,
// lies inside it and wraps one class; a decoded record renders as valid
// JSON and re-encodes to bytes that decode to the same JSON, and to the
// input itself when nothing trailed the last field (for the Connect
// topics: when the JSON was compact).
func FuzzDecode(f *testing.F) {
	for _, v := range vectors {
		key, _ := hexBytes(v.key)
		value, _ := hexBytes(v.value)
		f.Add(uint8(v.kind), key, value, false)
	}
	f.Add(uint8(ConnectOffsets), []byte(`["c",{"partition":0}]`), []byte(`{"offset":1}`), false)
	f.Add(uint8(ConnectStatus), []byte(`status-task-c-0`), []byte(`{"state":"RUNNING"}`), true)
	f.Fuzz(func(t *testing.T, k uint8, key, value []byte, nullValue bool) {
		kind := fuzzKinds[int(k)%len(fuzzKinds)]
		if nullValue {
			value = nil
		}
		r, err := Decode(kind, key, value)
		if err != nil {
			checkFuzzError(t, err, key, value)
			return
		}
		kj, vj := r.AppendKeyJSON(nil), r.AppendValueJSON(nil)
		if !json.Valid(kj) || !json.Valid(vj) {
			t.Fatalf("invalid JSON %s %s", kj, vj)
		}
		k2, v2, err := r.Encode()
		if err != nil {
			return // a string too long for Type.STRING cannot come from a decode, but stay lenient
		}
		r2, err := Decode(kind, k2, v2)
		if err != nil {
			t.Fatalf("re-encoded %x %x does not decode: %v", k2, v2, err)
		}
		if string(r2.AppendKeyJSON(nil)) != string(kj) || string(r2.AppendValueJSON(nil)) != string(vj) {
			t.Fatalf("re-decoded %s %s, want %s %s", r2.AppendKeyJSON(nil), r2.AppendValueJSON(nil), kj, vj)
		}
		exact := r.KeyTrailing == 0 && r.ValueTrailing == 0
		if kind.Connect() {
			exact = json.Valid(key) == r.Connect.KeyJSON && compactIs(key, r.Connect.KeyJSON) && compactIs(value, true)
		}
		if exact && (!bytes.Equal(k2, key) || !bytes.Equal(v2, value)) {
			t.Fatalf("re-encoded %x %x, want the input %x %x", k2, v2, key, value)
		}
	})
}

// compactIs: b is JSON as json.Compact writes it (or not JSON at all when
// isJSON is false), or nil.
func compactIs(b []byte, isJSON bool) bool {
	if b == nil || !isJSON {
		return true
	}
	var c bytes.Buffer
	return json.Compact(&c, b) == nil && bytes.Equal(c.Bytes(), b)
}

func checkFuzzError(t *testing.T, err error, key, value []byte) {
	t.Helper()
	ce, ok := decode.AsCorrupt(err)
	if !ok {
		t.Fatalf("error %v is not a *decode.CorruptError", err)
	}
	var part []byte
	switch {
	case ce.Field == "key" || len(ce.Field) > 4 && ce.Field[:4] == "key.":
		part = key
	case ce.Field == "value" || len(ce.Field) > 6 && ce.Field[:6] == "value.":
		part = value
	default:
		t.Fatalf("error names neither the key nor the value: %v", err)
	}
	if ce.Pos < 0 || ce.Pos > int64(len(part)) {
		t.Fatalf("position %d outside the %d bytes: %v", ce.Pos, len(part), err)
	}
	n := 0
	for _, c := range []error{decode.ErrCorrupt, decode.ErrTruncated, decode.ErrCRCMismatch, decode.ErrTooLarge, decode.ErrUnsupported} {
		if errors.Is(err, c) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("error wraps %d classes: %v", n, err)
	}
}

func hexBytes(s string) ([]byte, error) {
	var b []byte
	var hi = -1
	for _, c := range s {
		var v int
		switch {
		case c >= '0' && c <= '9':
			v = int(c - '0')
		case c >= 'a' && c <= 'f':
			v = int(c-'a') + 10
		default:
			continue
		}
		if hi < 0 {
			hi = v
		} else {
			b = append(b, byte(hi<<4|v))
			hi = -1
		}
	}
	return b, nil
}
