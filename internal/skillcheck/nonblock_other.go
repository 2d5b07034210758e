//go:build !unix

package skillcheck

// oNonblock is 0 where named pipes cannot block an open.
const oNonblock = 0
