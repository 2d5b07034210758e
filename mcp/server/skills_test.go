package server_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/mcp/server"
	"github.com/switchboard-dev/switchboard/skills"
)

// TestSkillResourceSizes (issue 35, item 4): a skill file served as a
// resource comes back whole up to 1 MiB, as docs/gateway.md says and as
// resources/list's size announces (it was cut to the skills toolset's
// 64 KiB read bound without notice); a larger file's read is refused with
// an error naming its size and the bound.
func TestSkillResourceSizes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "big-files")
	if err := os.MkdirAll(filepath.Join(dir, "references"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(rel string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, rel), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("SKILL.md", []byte("---\nname: big-files\ndescription: Has large files.\n---\nRead them.\n"))
	text := bytes.Repeat([]byte("0123456789abcdef"), 200<<10/16) // 200 KiB
	write("references/text.txt", text)
	exact := bytes.Repeat([]byte{7}, 1<<20) // 1 MiB: the bound itself
	write("references/exact.bin", exact)
	write("references/over.bin", append(bytes.Clone(exact), 8)) // 1 MiB + 1
	huge := filepath.Join(dir, "references", "huge.txt")        // 64 MB, sparse
	write("references/huge.txt", nil)
	if err := os.Truncate(huge, 64<<20); err != nil {
		t.Fatal(err)
	}

	ctx := testkit.Ctx(t, 30*time.Second)
	sk, err := skills.New(ctx, skills.Config{Roots: []skills.Root{{Path: filepath.Dir(dir)}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sk.Close() })
	srv := newServer(t, server.Config{Skills: sk})
	cs := connectMem(t, srv, nil)
	listed := map[string]int64{}
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed[r.URI] = r.Size
	}
	tests := []struct {
		file string
		want []byte // nil: refused
		size int64
	}{
		{"references/text.txt", text, 200 << 10},
		{"references/exact.bin", exact, 1 << 20},
		{"references/over.bin", nil, 1<<20 + 1},
		{"references/huge.txt", nil, 64 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			uri := "skill://big-files/" + tt.file
			if listed[uri] != tt.size {
				t.Errorf("resources/list size %d, want %d", listed[uri], tt.size)
			}
			r, err := cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: uri})
			if tt.want == nil {
				var je *jsonrpc.Error
				if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams ||
					!strings.Contains(je.Message, "is "+strconv.FormatInt(tt.size, 10)+" bytes, more than the 1048576 bytes") {
					t.Fatalf("read = %v, %v; want an invalid-params error naming the size and the bound", r, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := r.Contents[0].Blob
			if r.Contents[0].Text != "" {
				got = []byte(r.Contents[0].Text)
			}
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("read %d bytes, want the whole file's %d", len(got), len(tt.want))
			}
		})
	}
}
