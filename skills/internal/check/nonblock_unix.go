//go:build unix

package check

import "syscall"

// oNonblock keeps an open of a named pipe from waiting for a writer.
const oNonblock = syscall.O_NONBLOCK
