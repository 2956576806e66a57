//go:build !linux

package cmd

import "testing"

// fsWatch is a no-op off Linux: there the read-only test relies on the
// state comparison, the permission bits and the static check.
type fsWatch struct{}

type fsEvent struct{ path string }

func (fsEvent) write() bool                 { return false }
func (fsEvent) readClose() bool             { return false }
func (e fsEvent) String() string            { return e.path }
func (*fsWatch) enabled() bool              { return false }
func (*fsWatch) drain(*testing.T) []fsEvent { return nil }

func (*fsWatch) checkNothingOpen(*testing.T, string, string) {}

func watchTree(t *testing.T, root string) *fsWatch {
	t.Log("no inotify on this platform: open modes are not watched")
	return &fsWatch{}
}
