package digest

import (
	"errors"
	"testing"
)

// FuzzOpen: whatever the bytes, reading a digest does not panic, and an
// error is a *FormatError within them (or the reader's).
func FuzzOpen(f *testing.F) {
	for _, dir := range fixtureDirs(f) {
		f.Add(write(f, dir, Options{From: -1}))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := readAll(b)
		var fe *FormatError
		if err != nil && errors.As(err, &fe) && (fe.Pos < 0 || fe.Pos > int64(len(b))) {
			t.Fatalf("position %d outside the %d bytes: %v", fe.Pos, len(b), err)
		}
	})
}
