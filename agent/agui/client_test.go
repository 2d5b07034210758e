package agui_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent/agui"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// TestOfficialClient drives the Handler with @ag-ui/client's HttpAgent
// (internal/npm/agui-client.mjs, on the pinned Node 22): a tool call that
// needs approval, the interrupt, the resume that approves it; every event
// validated by @ag-ui/core's EventSchemas.
func TestOfficialClient(t *testing.T) {
	node := testkit.Node22(t)
	script := filepath.Join(filepath.Dir(testkit.NodeModules(t)), "agui-client.mjs")
	h, err := agui.New(context.Background(), agui.Config{Runner: newNoteAgent(t), State: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, srv.URL)
	cmd.Dir = filepath.Dir(script)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("agui-client.mjs: %v\n%s\n%s", err, out, stderr.String())
	}
	var got struct {
		Runs      [][]string `json:"runs"`
		Outcomes  []string   `json:"outcomes"`
		Interrupt struct {
			Reason     string `json:"reason"`
			ToolCallID string `json:"toolCallId"`
		} `json:"interrupt"`
		ToolMessages []string          `json:"toolMessages"`
		Assistant    []string          `json:"assistant"`
		Invalid      []json.RawMessage `json:"invalid"`
		Pending      int               `json:"pending"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("summary %s: %v", out, err)
	}
	t.Logf("runs: %v", got.Runs)
	if len(got.Invalid) > 0 {
		t.Fatalf("events rejected by EventSchemas: %s", got.Invalid)
	}
	if len(got.Outcomes) != 2 || got.Outcomes[0] != "interrupt" || got.Outcomes[1] != "success" {
		t.Fatalf("outcomes %v, want [interrupt success]", got.Outcomes)
	}
	if got.Interrupt.Reason != "tool_approval" || got.Interrupt.ToolCallID != "call_1" {
		t.Fatalf("interrupt %+v", got.Interrupt)
	}
	if len(got.ToolMessages) != 1 || !strings.Contains(got.ToolMessages[0], "saved: milk") {
		t.Fatalf("tool messages %q", got.ToolMessages)
	}
	if got.Pending != 0 {
		t.Fatalf("%d interrupts still pending", got.Pending)
	}
	if strings.Join(got.Runs[0], " ") != "RUN_STARTED STATE_SNAPSHOT STATE_DELTA STATE_DELTA STATE_DELTA TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END RUN_FINISHED" {
		t.Fatalf("first run %v", got.Runs[0])
	}
}
