package main

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/testkit"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestNewAgent runs the README's wiring against a local OpenAI-compatible
// server, in a project folder with an .mcp.json and a skill.
func TestNewAgent(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"All quiet."},"finish_reason":"stop"}],
				"usage":{"prompt_tokens":12,"completion_tokens":3}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"All quiet.\"}}]}\n\n"+
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"+
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3}}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	dir := t.TempDir()
	skill := filepath.Join(dir, ".agents", "skills", "triage")
	if err := os.MkdirAll(skill, 0o755); err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: triage\ndescription: Sorts issues by urgency.\n---\nSort them.\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{"mcpServers":{}}`), 0o644))
	t.Chdir(dir)
	t.Setenv("HOME", dir)
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SWITCHBOARD_PROVIDER", "OPENAI_MODEL"} {
		t.Setenv(k, "")
	}
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")

	ctx := testkit.Ctx(t, 30*time.Second)
	a, closeAll, err := newAgent(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ans, err := a.Run(ctx, "Summarise the open issues")
	if err != nil {
		t.Fatal(err)
	}
	if ans.Text != "All quiet." || requests.Load() != 1 {
		t.Errorf("answer %q after %d model requests, want %q after 1", ans.Text, requests.Load(), "All quiet.")
	}
	if err := closeAll(); err != nil {
		t.Fatalf("closeAll: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestNewAgentFails (issue 35): each way the wiring can fail returns a
// clear error and releases what it started (goleak checks the bus is
// closed); these paths panicked, the named result closeAll being nil when
// the deferred cleanup called it.
func TestNewAgentFails(t *testing.T) {
	tests := []struct {
		name    string
		key     string // OPENAI_API_KEY
		mcpJSON string // "" writes no .mcp.json
		tmpdir  string // TMPDIR: the embedded bus's store directory is made there
		want    string
	}{
		{name: "no model key", mcpJSON: `{"mcpServers":{}}`, want: "API_KEY"},
		{name: "bad .mcp.json", key: "sk-test", mcpJSON: `{"mcpServers":`, want: ".mcp.json"},
		{name: "no .mcp.json", key: "sk-test", want: ".mcp.json"},
		{name: "bus cannot start", key: "sk-test", mcpJSON: `{"mcpServers":{}}`, tmpdir: "/nonexistent/switchboard", want: "bus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.mcpJSON != "" {
				must(t, os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(tt.mcpJSON), 0o644))
			}
			t.Chdir(dir)
			t.Setenv("HOME", dir)
			for _, k := range []string{"ANTHROPIC_API_KEY", "SWITCHBOARD_PROVIDER", "OPENAI_MODEL", "OPENAI_BASE_URL"} {
				t.Setenv(k, "")
			}
			t.Setenv("OPENAI_API_KEY", tt.key)
			t.Setenv("TMPDIR", cmp.Or(tt.tmpdir, dir))
			a, closeAll, err := newAgent(testkit.Ctx(t, 30*time.Second), nil)
			if err == nil {
				_ = closeAll()
				t.Fatalf("newAgent succeeded; want an error about %s", tt.want)
			}
			t.Logf("%v", err)
			if a != nil || closeAll != nil {
				t.Errorf("on error newAgent returned an agent (%v) or a closeAll (%v); want neither", a != nil, closeAll != nil)
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q; want one line naming %s", err, tt.want)
			}
		})
	}
}
