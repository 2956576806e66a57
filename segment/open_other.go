//go:build !unix

package segment

// FIFOs do not block an open on this platform.
const oNonblock = 0
