package ui

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"testing"
)

func TestAppendBase64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		for range 5 {
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(r.Uint32())
			}
			prefix := []byte("x")
			got := AppendBase64(prefix[:1:1], src)
			want := base64.StdEncoding.AppendEncode([]byte("x"), src)
			if !bytes.Equal(got, want) {
				t.Fatalf("%d bytes: got %q, want %q", n, got, want)
			}
		}
	}
	if got := AppendBase64(nil, nil); len(got) != 0 {
		t.Errorf("empty input: %q", got)
	}
}

func BenchmarkBase64(b *testing.B) {
	src := make([]byte, 64<<10)
	for i := range src {
		src[i] = byte(i * 7)
	}
	dst := make([]byte, 0, base64.StdEncoding.EncodedLen(len(src)))
	b.Run("appendBase64", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			dst = AppendBase64(dst[:0], src)
		}
	})
	b.Run("stdlib", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			dst = base64.StdEncoding.AppendEncode(dst[:0], src)
		}
	})
}
