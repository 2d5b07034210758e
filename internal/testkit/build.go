package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// built are the binaries GoBinary made in this process, by package dir.
var built sync.Map // string -> *binary

type binary struct {
	once sync.Once
	path string
	err  error
}

// GoBinary builds the Go package at dir (relative to the test's own
// package: ".", "./testdata/relay", "../internal/testserver") once per
// test process and returns the binary's path, in a temporary folder of
// its own; a build that fails fails tb with the compiler's output.
func GoBinary(tb testing.TB, dir string) string {
	tb.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	v, _ := built.LoadOrStore(abs, &binary{})
	b := v.(*binary)
	b.once.Do(func() {
		tmp, err := os.MkdirTemp("", "switchboard-bin-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(tmp, filepath.Base(abs))
		if out, err := exec.Command("go", "build", "-o", b.path, abs).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", dir, err, out)
		}
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.path
}

// RemoveBinaries removes what GoBinary built in this process: call it from
// TestMain after m.Run.
func RemoveBinaries() {
	built.Range(func(_, v any) bool {
		if b := v.(*binary); b.path != "" {
			_ = os.RemoveAll(filepath.Dir(b.path))
		}
		return true
	})
}
