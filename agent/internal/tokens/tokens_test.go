package tokens_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/switchboard-dev/switchboard/agent/internal/tokens"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// sample is one chunk of the corpus with its token counts by gpt-tokenizer
// (internal/npm/count-tokens.mjs wrote testdata/counts.json).
type sample struct {
	File   string `json:"file"`
	Text   string `json:"text"`
	O200k  int    `json:"o200k"`
	CL100k int    `json:"cl100k"`
}

func loadSamples(t *testing.T) []sample {
	t.Helper()
	b, err := os.ReadFile("testdata/counts.json")
	if err != nil {
		t.Fatal(err)
	}
	var s []sample
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s) < 30 {
		t.Fatalf("the corpus has %d samples, want at least 30", len(s))
	}
	return s
}

// TestEstimateErrorBound holds ErrorBound: on every sample of the corpus
// of at least 100 tokens, Count is within ErrorBound of o200k_base and of
// cl100k_base, and within 5% on the whole corpus.
func TestEstimateErrorBound(t *testing.T) {
	var est, ref, refCL int
	worst := 0.0
	for i, s := range loadSamples(t) {
		n := tokens.Count(s.Text)
		est += n
		ref += s.O200k
		refCL += s.CL100k
		for _, r := range []int{s.O200k, s.CL100k} {
			if r < 100 {
				continue
			}
			e := float64(n)/float64(r) - 1
			worst = math.Max(worst, math.Abs(e))
			if math.Abs(e) > tokens.ErrorBound {
				t.Errorf("sample %d (%s): estimate %d, reference %d: error %+.1f%% exceeds %.0f%%", i, s.File, n, r, 100*e, 100*tokens.ErrorBound)
			}
		}
	}
	total := float64(est)/float64(ref) - 1
	t.Logf("corpus: estimate %d, o200k %d (%+.1f%%), cl100k %d; worst sample %.1f%%", est, ref, 100*total, refCL, 100*worst)
	if math.Abs(total) > 0.05 {
		t.Errorf("whole corpus: estimate %d against %d: error %+.1f%% exceeds 5%%", est, ref, 100*total)
	}
}

// TestCountsAreReal recomputes testdata/counts.json with the npm
// tokenizer, so the reference cannot drift from the corpus.
func TestCountsAreReal(t *testing.T) {
	node := testkit.Node22(t)
	dir := testkit.NodeModules(t)
	script := filepath.Join(filepath.Dir(dir), "count-tokens.mjs")
	corpus, _ := filepath.Abs("testdata/corpus")
	out, err := exec.CommandContext(testkit.Ctx(t, 60e9), node, script, corpus).Output()
	if err != nil {
		t.Fatalf("count-tokens.mjs: %v", err)
	}
	want, err := os.ReadFile("testdata/counts.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, want) {
		t.Fatal("testdata/counts.json differs from what count-tokens.mjs computes from testdata/corpus: regenerate it")
	}
}

func TestCountBasics(t *testing.T) {
	for _, tc := range []struct {
		in       string
		min, max int
	}{
		{"", 0, 0},
		{"hello", 1, 1},
		{"hello world", 2, 2},
		{`{"a":1}`, 3, 6},
		{"工具的结果", 3, 6},
		{"\xff\xfe", 1, 2},
	} {
		if n := tokens.Count(tc.in); n < tc.min || n > tc.max {
			t.Errorf("Count(%q) = %d, want %d..%d", tc.in, n, tc.min, tc.max)
		}
	}
}

func FuzzCount(f *testing.F) {
	for _, s := range []string{"", "hello world", `{"a":[1,2]}`, "工具", "\xff", "  \n\t x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := tokens.Count(s)
		if n < 0 || n > len(s) {
			t.Fatalf("Count(%q) = %d, outside 0..%d", s, n, len(s))
		}
		if len(s) > 0 && n == 0 {
			t.Fatalf("Count(%q) = 0 for non-empty text", s)
		}
	})
}

func TestWindow(t *testing.T) {
	for _, tc := range []struct {
		name string
		want int
	}{
		{"openai/gpt-4o-mini", 128_000},
		{"openai/gpt-4.1-mini", 1_047_576},
		{"openai/gpt-4", 8_192},
		{"anthropic/claude-sonnet-4-5", 200_000},
		{"Claude-3-5-haiku", 200_000},
		{"ollama/llama3.2", 128_000},
		{"scripted (offline)", 0},
		{"", 0},
	} {
		if got := tokens.Window(tc.name); got != tc.want {
			t.Errorf("Window(%q) = %d, want %d", tc.name, got, tc.want)
		}
	}
}
