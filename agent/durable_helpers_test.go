package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// planModel answers from the conversation alone (the number of assistant
// turns since the last user message picks the step), so that a model in a
// fresh agent continues a resumed run where the old one stopped.
type planModel struct {
	steps [][]llm.ToolCall // tool calls per turn; after the last, the answer
	final string
	calls atomic.Int32
}

func (m *planModel) Name() string { return "plan" }

func (m *planModel) Generate(_ context.Context, req *llm.Request) (*llm.Response, error) {
	m.calls.Add(1)
	turn := 0
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != llm.RoleUser; i-- {
		if req.Messages[i].Role == llm.RoleAssistant {
			turn++
		}
	}
	if turn < len(m.steps) {
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: m.steps[turn]},
			Usage: llm.Usage{InputTokens: 10, OutputTokens: 2}}, nil
	}
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Text: m.final}, Usage: llm.Usage{InputTokens: 10, OutputTokens: 3}}, nil
}

func call(id, name string, n int) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n))}
}

// ledger counts the executions of side-effecting tools by idempotency key
// (run and call id), as a payment service would see them.
type ledger struct {
	mu   sync.Mutex
	runs map[string]int // key -> executions
	tool map[string]string
}

func newLedger() *ledger { return &ledger{runs: map[string]int{}, tool: map[string]string{}} }

func (l *ledger) record(ctx context.Context, tool string) string {
	call, _ := agent.CallFromContext(ctx)
	key := call.IdempotencyKey()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs[key]++
	l.tool[key] = tool
	return key
}

func (l *ledger) count(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.runs[key]
}

// durableTools: pay (side effects, not idempotent), mail (idempotent),
// look (read-only). Each records its executions in l.
func durableTools(l *ledger) []agent.Tool {
	mk := func(spec agent.ToolSpec) agent.Tool {
		spec.Description, spec.InputSchema = "test tool "+spec.Name, json.RawMessage(`{"type":"object"}`)
		return agent.NewFuncTool(spec, func(ctx context.Context, args json.RawMessage) (*agent.Result, error) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			key := l.record(ctx, spec.Name)
			if key == "" {
				return nil, fmt.Errorf("no idempotency key")
			}
			return agent.TextResult(spec.Name + " ok " + string(args)), nil
		})
	}
	return []agent.Tool{mk(agent.ToolSpec{Name: "pay"}), mk(agent.ToolSpec{Name: "mail", Idempotent: true}),
		mk(agent.ToolSpec{Name: "look", ReadOnly: true})}
}

// fourTurns is a multi-turn, multi-tool plan: parallel batches mixing the
// three kinds of tools.
func fourTurns() *planModel {
	return &planModel{final: "all done", steps: [][]llm.ToolCall{
		{call("c1", "pay", 1), call("c2", "look", 1)},
		{call("c3", "pay", 2), call("c4", "mail", 2), call("c5", "pay", 3)},
		{call("c6", "mail", 4)},
		{call("c7", "pay", 5), call("c8", "look", 5)},
	}}
}

// events records a run's events.
type events struct {
	mu  sync.Mutex
	evs []agent.Event
}

func (e *events) Emit(_ context.Context, ev agent.Event) {
	e.mu.Lock()
	e.evs = append(e.evs, ev)
	e.mu.Unlock()
}

func (e *events) failures(k failure.Kind) []agent.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []agent.Event
	for _, ev := range e.evs {
		if ev.Type == agent.EventFailure && ev.Failure != nil && ev.Failure.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// killStore is a store whose process dies at its n-th write: the run's
// context is cancelled, and that write (when before is set) and every
// later one fail, as nothing a killed process does reaches the store.
type killStore struct {
	agent.Store
	n      int
	before bool
	// stopOnly cancels the run at write n without killing the store: the
	// caller stopped the run; the process lives on.
	stopOnly bool
	cancel   context.CancelFunc
	writes   atomic.Int32
}

var errKilled = &failure.Error{Kind: failure.Unavailable, Source: failure.SourceAgent, Message: "the process was killed"}

// write does write number n and those before it, and kills at n: every
// later write fails, judged by its number (a write that merely started
// after the kill, its check of a flag racing the kill, was a write of a
// process already dead, which stores nothing).
func (k *killStore) write(do func() error) error {
	w := int(k.writes.Add(1))
	switch {
	case k.n <= 0 || w < k.n:
		return do()
	case w == k.n:
		k.cancel()
		if k.stopOnly || !k.before {
			return do()
		}
		return errKilled
	case k.stopOnly:
		return do()
	}
	return errKilled
}

func (k *killStore) PutSession(ctx context.Context, rec *agent.SessionRecord, expect uint64) (rev uint64, err error) {
	err = k.write(func() error { rev, err = k.Store.PutSession(ctx, rec, expect); return err })
	return rev, err
}

func (k *killStore) AppendSession(ctx context.Context, rec *agent.SessionRecord, expect uint64) (rev uint64, err error) {
	err = k.write(func() error { rev, err = k.Store.AppendSession(ctx, rec, expect); return err })
	return rev, err
}

func (k *killStore) SaveCheckpoint(ctx context.Context, cp *agent.Checkpoint, expect uint64) (rev uint64, err error) {
	err = k.write(func() error { rev, err = k.Store.SaveCheckpoint(ctx, cp, expect); return err })
	return rev, err
}

func (k *killStore) PutIntent(ctx context.Context, c *agent.CallRecord) error {
	return k.write(func() error { return k.Store.PutIntent(ctx, c) })
}

func (k *killStore) PutCallResult(ctx context.Context, c *agent.CallRecord) error {
	return k.write(func() error { return k.Store.PutCallResult(ctx, c) })
}

func (k *killStore) PutQuestion(ctx context.Context, q *agent.Question) error {
	return k.write(func() error { return k.Store.PutQuestion(ctx, q) })
}

// checkHistory fails unless every tool call in h has exactly one result,
// in the tool message right after it, and the history ends with an answer.
func checkHistory(t *testing.T, h []llm.Message) {
	t.Helper()
	for i, m := range h {
		if m.Role != llm.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		if i+1 >= len(h) || h[i+1].Role != llm.RoleTool {
			t.Fatalf("message %d: tool calls without a tool message after them", i)
		}
		got := map[string]int{}
		for _, r := range h[i+1].ToolResults {
			got[r.CallID]++
		}
		if len(got) != len(m.ToolCalls) || len(h[i+1].ToolResults) != len(m.ToolCalls) {
			t.Fatalf("message %d: %d calls, results %v", i, len(m.ToolCalls), got)
		}
		for _, c := range m.ToolCalls {
			if got[c.ID] != 1 {
				t.Fatalf("message %d: call %s has %d results", i, c.ID, got[c.ID])
			}
		}
	}
	for i, m := range h {
		if m.Role == llm.RoleTool && (i == 0 || len(h[i-1].ToolCalls) == 0) {
			t.Fatalf("message %d: tool results without calls before them", i)
		}
	}
	if last := h[len(h)-1]; last.Role != llm.RoleAssistant || len(last.ToolCalls) != 0 {
		t.Fatalf("the history ends with %+v", last)
	}
}

// results maps call ids to the content of their results in h.
func results(h []llm.Message) map[string]llm.ToolResult {
	out := map[string]llm.ToolResult{}
	for _, m := range h {
		for _, r := range m.ToolResults {
			out[r.CallID] = r
		}
	}
	return out
}

func inDoubt(r llm.ToolResult) bool {
	return r.IsError && strings.Contains(r.Content, "outcome of the call")
}

func durableAgent(t *testing.T, st agent.Store, m llm.Model, l *ledger, sink agent.EventSink, d agent.Durability) *agent.Agent {
	t.Helper()
	d.Sessions, d.Runs, d.Inbox = st, st, st
	a, err := agent.New(context.Background(), agent.Config{Name: "durable", Model: m, Tools: durableTools(l),
		Permissions: agent.AllowAll(), Policy: testkit.FastPolicy(failure.PolicyConfig{}), Events: sink, Durable: d})
	if err != nil {
		t.Fatal(err)
	}
	return a
}
