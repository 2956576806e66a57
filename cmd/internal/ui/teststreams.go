package ui

import (
	"bytes"
	"strings"
	"sync"
)

// SyncBuffer is a bytes.Buffer safe for the ticker goroutine and the test.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TTYTestStreams are test streams whose stderr (and, if outTTY, stdout) claim
// to be a terminal.
func TTYTestStreams(outTTY bool) (*Streams, *SyncBuffer, *SyncBuffer) {
	s, _, _ := TestStreams()
	out, errb := &SyncBuffer{}, &SyncBuffer{}
	s.Out, s.Err = out, errb
	s.ErrTTY, s.OutTTY = true, outTTY
	return s, out, errb
}

// TestStreams returns streams backed by buffers, as a pipe (no TTY, no
// colour) unless the caller flips the fields.
func TestStreams() (*Streams, *bytes.Buffer, *bytes.Buffer) {
	out, errb := &bytes.Buffer{}, &bytes.Buffer{}
	env := map[string]string{}
	return &Streams{In: strings.NewReader(""), Out: out, Err: errb,
		Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}, out, errb
}
