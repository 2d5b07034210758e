//go:build !linux

package lineconn

import "io"

// rawReader is r: raw reads are Linux's alone (rawfile_linux.go).
func rawReader(r io.Reader) io.Reader { return r }

// rawWriter is w: raw writes are Linux's alone (rawfile_linux.go).
func rawWriter(w io.Writer) io.Writer { return w }
