//go:build !unix

package segment

import "os"

// newMmapSource: no mapping outside Unix; the scanner reads instead.
func newMmapSource(*os.File, int64, int) windowSource { return nil }
