package skills

import (
	"context"
	"io/fs"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
)

// countingFS counts the bytes read from its files.
type countingFS struct {
	fs.FS
	n *atomic.Int64
}

type countingFile struct {
	fs.File
	n *atomic.Int64
}

func (c countingFS) Open(name string) (fs.File, error) {
	f, err := c.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return countingFile{f, c.n}, nil
}

func (f countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.n.Add(int64(n))
	return n, err
}

// TestStartupReadsFrontmatterOnly: loading reads a SKILL.md only up to its
// closing delimiter (in small chunks), the body is read on activation, and
// both are cached.
func TestStartupReadsFrontmatterOnly(t *testing.T) {
	body := strings.Repeat("A long body line that startup must not read.\n", 20_000) // ~900 KB
	var n atomic.Int64
	fsys := countingFS{fstest.MapFS{"big/SKILL.md": {Data: []byte("---\nname: big\ndescription: Big body.\n---\n" + body)}}, &n}
	ts, err := New(context.Background(), Config{Roots: []Root{{FS: fsys}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ts.Skill("big"); !ok {
		t.Fatal(ts.Errors())
	}
	if got := n.Load(); got > 8192 {
		t.Errorf("startup read %d bytes of a %d-byte file", got, len(body))
	}
	before := n.Load()
	if _, err := ts.Activate(context.Background(), "big"); err != nil {
		t.Fatal(err)
	}
	if got := n.Load() - before; got < int64(len(body)) {
		t.Errorf("activation read %d bytes, less than the body", got)
	}
	before = n.Load()
	if _, err := ts.Activate(context.Background(), "big"); err != nil {
		t.Fatal(err)
	}
	if got := n.Load() - before; got != 0 {
		t.Errorf("second activation read %d bytes; the body should be cached", got)
	}
	before = n.Load()
	if changed, err := ts.Reload(context.Background()); err != nil || changed {
		t.Fatalf("reload: %v %v", changed, err)
	}
	if got := n.Load() - before; got != 0 {
		t.Errorf("reload of an unchanged skill read %d bytes", got)
	}
}

func (f countingFile) ReadDir(n int) ([]fs.DirEntry, error) {
	if d, ok := f.File.(fs.ReadDirFile); ok {
		return d.ReadDir(n)
	}
	return nil, &fs.PathError{Op: "readdir", Err: fs.ErrInvalid}
}
