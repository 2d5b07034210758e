package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
)

// readResult calls the mcp_read_result tool of m.
func readResult(t *testing.T, m *Manager, args string) *agent.Result {
	t.Helper()
	tools, _ := m.Toolset().Tools(context.Background())
	for _, tl := range tools {
		if tl.Spec().Name == nameReadResult {
			r, err := tl.Call(context.Background(), json.RawMessage(args))
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	t.Fatal("no read-result tool")
	return nil
}

// TestLargeImageIsSavedWhole: a result over the limit because of an image
// (issue 15, item 7) keeps the image: saved as a .png file of its own,
// listed in the pointer, and read back byte for byte in base64 pages, or
// whole as an image part.
func TestLargeImageIsSavedWhole(t *testing.T) {
	const size = 200_000
	m := newManager(t, quickConfig(testServer("img", "", nil)))
	res, err := m.CallTool(context.Background(), "img", "image", json.RawMessage(fmt.Sprintf(`{"bytes":%d}`, size)))
	if err != nil {
		t.Fatal(err)
	}
	text := res.Text()
	ids := regexp.MustCompile(`"(res_[a-z0-9]+\.2)": image image/png, 200000 bytes`).FindStringSubmatch(text)
	if ids == nil || !strings.Contains(text, "a chart") {
		t.Fatalf("pointer result: %s", text)
	}
	id := ids[1]
	files, _ := filepath.Glob(filepath.Join(m.results.dir, id+".png"))
	if len(files) != 1 {
		t.Fatalf("no .png file for %s in %s", id, m.results.dir)
	}
	if st, err := os.Stat(files[0]); err != nil || st.Size() != size {
		t.Fatalf("the saved image: %v, %v", st, err)
	}
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i * 7 % 251)
	}
	var got []byte
	for off := 0; off < size; {
		r := readResult(t, m, fmt.Sprintf(`{"id":%q,"offset":%d,"length":100000}`, id, off))
		body := r.Text()
		nl := strings.IndexByte(body, '\n')
		if !strings.Contains(body[:nl], "image image/png, base64") {
			t.Fatalf("page header %q", body[:nl])
		}
		b, err := base64.StdEncoding.DecodeString(body[nl+1:])
		if err != nil || len(b) == 0 {
			t.Fatalf("page at %d: %v", off, err)
		}
		got = append(got, b...)
		off += len(b)
	}
	if string(got) != string(want) {
		t.Fatal("the image read back differs from the one returned")
	}
	whole := readResult(t, m, fmt.Sprintf(`{"id":%q,"length":100000}`, id))
	if len(whole.Parts) != 1 {
		t.Fatalf("a partial read returned %d parts", len(whole.Parts))
	}
}

// TestReadWholeSmallBinary: reading a small saved binary part whole gives
// the part itself.
func TestReadWholeSmallBinary(t *testing.T) {
	r := newResultStore(t.TempDir(), false, 0)
	defer r.close()
	big := strings.Repeat("t", 5000)
	ptr, err := r.spill("x", &agent.Result{Parts: []agent.Part{{Type: agent.PartText, Text: big},
		{Type: agent.PartAudio, MIMEType: "audio/wav", Data: []byte("RIFF1234")}}})
	if err != nil {
		t.Fatal(err)
	}
	id := regexp.MustCompile(`"(res_[a-z0-9]+\.2)"`).FindStringSubmatch(ptr.Text())[1]
	got, err := r.read(id, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Parts) != 2 || got.Parts[1].Type != agent.PartAudio || string(got.Parts[1].Data) != "RIFF1234" || got.Parts[1].MIMEType != "audio/wav" {
		t.Fatalf("parts %+v", got.Parts)
	}
}

// TestSavedResultLifetime (issue 15, item 12): saved results expire after
// their TTL, the oldest go beyond the count cap, and Close removes the
// rest of what the store wrote, in a caller's directory too, leaving the
// caller's own files.
func TestSavedResultLifetime(t *testing.T) {
	one := &agent.Result{Parts: []agent.Part{{Type: agent.PartText, Text: "big"}, {Type: agent.PartImage, MIMEType: "image/png", Data: []byte{1, 2, 3}}}}
	count := func(dir string) int {
		files, _ := filepath.Glob(filepath.Join(dir, "res_*"))
		return len(files)
	}
	tests := []struct {
		name  string
		ttl   time.Duration
		spill int
		wait  time.Duration
		want  int // files left before close
	}{
		{"expires after its TTL", 100 * time.Millisecond, 2, 600 * time.Millisecond, 0},
		{"kept until close", -1, 3, 0, 6},
		{"count cap", -1, maxSavedResults + 5, 0, 2 * maxSavedResults},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			mine := filepath.Join(dir, "res_mine.txt")
			if err := os.WriteFile(mine, []byte("the caller's"), 0o600); err != nil {
				t.Fatal(err)
			}
			r := newResultStore(dir, false, tt.ttl)
			var first string
			for i := range tt.spill {
				ptr, err := r.spill("x", one)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					first = regexp.MustCompile(`"(res_[a-z0-9]+)"`).FindStringSubmatch(ptr.Text())[1]
				}
			}
			if tt.wait > 0 {
				time.Sleep(tt.wait)
			}
			if got := count(dir) - 1; got != tt.want {
				t.Errorf("%d files left, want %d", got, tt.want)
			}
			if tt.want < 2*tt.spill {
				if _, err := r.read(first, 0, 10); err == nil || !strings.Contains(err.Error(), "no saved result") {
					t.Errorf("reading a removed result: %v", err)
				}
			}
			r.close()
			if got := count(dir); got != 1 {
				t.Errorf("%d files after close, want only the caller's", got)
			}
			if _, err := os.Stat(mine); err != nil {
				t.Errorf("the caller's file: %v", err)
			}
		})
	}
}

// TestSpillReportsWholeSize (issue 35, item 7): the pointer to a spilled
// result gives the size of the whole result, binary parts included; a
// 150 KB image was reported as "69 bytes", the size of its placeholder text.
func TestSpillReportsWholeSize(t *testing.T) {
	img := make([]byte, 150_000)
	tests := []struct {
		name  string
		parts []agent.Part
		want  *regexp.Regexp
	}{
		{"image", []agent.Part{{Type: agent.PartImage, MIMEType: "image/png", Data: img}},
			regexp.MustCompile(`is (\d+) bytes \((\d+) of text, 150000 in 1 binary part\(s\)\)`)},
		{"blob and text", []agent.Part{{Type: agent.PartText, Text: "caption"},
			{Type: agent.PartResource, MIMEType: "application/pdf", URI: "file:///a.pdf", Data: img}},
			regexp.MustCompile(`is (\d+) bytes \((\d+) of text, 150000 in 1 binary part\(s\)\)`)},
		{"text", []agent.Part{{Type: agent.PartText, Text: strings.Repeat("t", 5000)}},
			regexp.MustCompile(`is (5000) bytes, too large`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newResultStore(t.TempDir(), false, 0)
			defer r.close()
			ptr, err := r.spill("x", &agent.Result{Parts: tt.parts})
			if err != nil {
				t.Fatal(err)
			}
			m := tt.want.FindStringSubmatch(ptr.Text())
			if m == nil {
				t.Fatalf("the pointer does not match %v:\n%.400s", tt.want, ptr.Text())
			}
			if len(m) == 3 {
				total, _ := strconv.Atoi(m[1])
				text, _ := strconv.Atoi(m[2])
				if total != text+150_000 {
					t.Errorf("total %d, want text %d + 150000", total, text)
				}
			}
		})
	}
}
