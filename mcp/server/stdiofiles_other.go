//go:build !unix

package server

import "os"

// stdioFiles are os.Stdin and os.Stdout (on Unix they are made
// non-blocking: stdiofiles_unix.go).
func stdioFiles() (in, out *os.File) { return os.Stdin, os.Stdout }
