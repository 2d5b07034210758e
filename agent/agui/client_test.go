package agui_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/agui"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// runClient runs internal/npm/agui-client.mjs in mode against h, on the
// pinned Node 22, and returns its summary line.
// A second handler, when given, takes the script's follow-up run.
func runClient(t *testing.T, h *agui.Handler, mode string, other ...*agui.Handler) []byte {
	t.Helper()
	node := testkit.Node22(t)
	script := filepath.Join(filepath.Dir(testkit.NodeModules(t)), "agui-client.mjs")
	srv := httptest.NewServer(h)
	defer srv.Close()
	args := []string{script, srv.URL, mode}
	for _, o := range other {
		osrv := httptest.NewServer(o)
		defer osrv.Close()
		args = append(args, osrv.URL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = filepath.Dir(script)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("agui-client.mjs %s: %v\n%s\n%s", mode, err, out, stderr.String())
	}
	return out
}

// TestOfficialClient drives the Handler with @ag-ui/client's HttpAgent
// (internal/npm/agui-client.mjs, on the pinned Node 22): a tool call that
// needs approval, the interrupt, the resume that approves it; every event
// validated by @ag-ui/core's EventSchemas.
func TestOfficialClient(t *testing.T) {
	h, err := agui.New(context.Background(), agui.Config{Runner: newNoteAgent(t), State: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	out := runClient(t, h, "approval")
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

// summary is what agui-client.mjs prints.
type summary struct {
	Runs         [][]string        `json:"runs"`
	Outcomes     []string          `json:"outcomes"`
	ToolMessages []string          `json:"toolMessages"`
	Assistant    []string          `json:"assistant"`
	State        map[string]any    `json:"state"`
	Invalid      []json.RawMessage `json:"invalid"`
	Pending      []string          `json:"pending"`
	PendingAfter []string          `json:"pendingAfter"`
	Call         string            `json:"call"`
}

// recorder is a model that records what each turn was asked.
type recorder struct {
	mu   sync.Mutex
	reqs []llm.Request
}

func (r *recorder) step(f func(req *llm.Request) llm.Step) llm.Step {
	return llm.React(func(req *llm.Request) llm.Step {
		r.mu.Lock()
		r.reqs = append(r.reqs, *req)
		r.mu.Unlock()
		return f(req)
	})
}

// The model calls a frontend tool: the first run finishes with the call
// pending (no result of the server's), the client runs the tool, and its
// next run continues the same agent run with the client's result.
func TestOfficialClientFrontendTool(t *testing.T) {
	t.Run("same handler", func(t *testing.T) { frontendTool(t, false) })
	// The follow-up reaches another replica, where no run waits for the
	// result: the conversation continues there from the client's messages.
	t.Run("another replica", func(t *testing.T) { frontendTool(t, true) })
}

func frontendTool(t *testing.T, replica bool) {
	rec := &recorder{}
	model := llm.NewScripted(
		rec.step(func(*llm.Request) llm.Step {
			return llm.Calls(llm.CallTool("call_color", "pick_color", map[string]string{"hint": "favourite"}))
		}),
		rec.step(func(req *llm.Request) llm.Step {
			last := req.Messages[len(req.Messages)-1]
			if len(last.ToolResults) != 1 {
				return llm.Say("no result")
			}
			return llm.Say("You like " + last.ToolResults[0].Content)
		}),
	)
	a, err := agent.New(context.Background(), agent.Config{Name: "colors", Model: model})
	if err != nil {
		t.Fatal(err)
	}
	h, err := agui.New(context.Background(), agui.Config{Runner: a, State: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var others []*agui.Handler
	if replica {
		o, err := agui.New(context.Background(), agui.Config{Runner: a, State: true})
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		others = append(others, o)
	}
	var got summary
	out := runClient(t, h, "frontend", others...)
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("summary %s: %v", out, err)
	}
	t.Logf("runs: %v", got.Runs)
	if len(got.Invalid) > 0 {
		t.Fatalf("events rejected by EventSchemas: %s", got.Invalid)
	}
	if len(got.Outcomes) != 2 || got.Outcomes[0] != "success" || got.Outcomes[1] != "success" {
		t.Fatalf("outcomes %v, want [success success]", got.Outcomes)
	}
	if got.Call != "pick_color" || len(got.Pending) != 1 || got.Pending[0] != "call_color" || len(got.PendingAfter) != 0 {
		t.Fatalf("pending calls %v then %v (call %q)", got.Pending, got.PendingAfter, got.Call)
	}
	if s := strings.Join(got.Runs[0], " "); !strings.HasSuffix(s, "TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END RUN_FINISHED") {
		t.Fatalf("first run %s", s)
	}
	if slices.Contains(got.Runs[1], "TOOL_CALL_RESULT") {
		t.Fatalf("second run %v: the client's own result came back", got.Runs[1])
	}
	if len(got.ToolMessages) != 1 {
		t.Fatalf("tool messages %q, want the client's one", got.ToolMessages)
	}
	if n := len(got.Assistant); n == 0 || !strings.Contains(got.Assistant[n-1], "teal (asked: favourite)") {
		t.Fatalf("assistant messages %q", got.Assistant)
	}
	if got.State["theme"] != "dark" || got.State["switchboard"] == nil {
		t.Fatalf("state %v", got.State)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.reqs) != 2 {
		t.Fatalf("%d model turns, want 2", len(rec.reqs))
	}
	first := rec.reqs[0]
	if !slices.ContainsFunc(first.Tools, func(d llm.ToolDef) bool { return d.Name == "pick_color" }) {
		t.Fatalf("the model was not offered the frontend tool: %v", first.Tools)
	}
	for _, want := range []string{"the user's name: Ada", `"theme":"dark"`} {
		if !strings.Contains(first.System, want) {
			t.Fatalf("system prompt lacks %q:\n%s", want, first.System)
		}
	}
}

// A conversation of many messages reaches the model as its history: the
// system and developer messages as instructions, the assistant's call
// with its result, and the last user message as the run's input.
func TestOfficialClientHistory(t *testing.T) {
	rec := &recorder{}
	model := llm.NewScripted(rec.step(func(*llm.Request) llm.Step { return llm.Say("Vous êtes Ada.") }))
	a, err := agent.New(context.Background(), agent.Config{Name: "memo", Model: model, Instructions: "You are memo."})
	if err != nil {
		t.Fatal(err)
	}
	h, err := agui.New(context.Background(), agui.Config{Runner: a})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var got summary
	out := runClient(t, h, "history")
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("summary %s: %v", out, err)
	}
	if len(got.Invalid) > 0 {
		t.Fatalf("events rejected by EventSchemas: %s", got.Invalid)
	}
	if len(got.Outcomes) != 1 || got.Outcomes[0] != "success" {
		t.Fatalf("outcomes %v", got.Outcomes)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.reqs) != 1 {
		t.Fatalf("%d model turns, want 1", len(rec.reqs))
	}
	req := rec.reqs[0]
	var roles []string
	for _, m := range req.Messages {
		r := m.Role
		if len(m.ToolCalls) > 0 {
			r += "+call"
		}
		roles = append(roles, r)
	}
	if s := strings.Join(roles, " "); s != "user assistant+call tool assistant user" {
		t.Fatalf("history roles %s", s)
	}
	if m := req.Messages[2]; m.ToolResults[0].CallID != "c1" || m.ToolResults[0].Name != "remember" || !strings.Contains(m.ToolResults[0].Content, "remembered") {
		t.Fatalf("tool result %+v", m.ToolResults)
	}
	if req.Messages[4].Text != "what is my name?" {
		t.Fatalf("input %q", req.Messages[4].Text)
	}
	for _, want := range []string{"You are memo.", "Answer in French.", "Be brief.", "locale: fr-FR", `"cart":["milk"]`} {
		if !strings.Contains(req.System, want) {
			t.Fatalf("system prompt lacks %q:\n%s", want, req.System)
		}
	}
}
