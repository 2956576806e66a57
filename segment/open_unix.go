//go:build unix

package segment

import "syscall"

const oNonblock = syscall.O_NONBLOCK
