//go:build !unix

package check

// oNonblock is 0 where named pipes cannot block an open.
const oNonblock = 0
