package bus_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/store"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// parkingAgent is an agent whose "pay" tool asks for permission and parks
// at once; paid counts the tool's real executions.
func parkingAgent(t *testing.T, ctx context.Context, st agent.Store, paid *atomic.Int64) *agent.Agent {
	t.Helper()
	pay := agent.NewFuncTool(agent.ToolSpec{Name: "pay", Description: "Pays."},
		func(context.Context, json.RawMessage) (*agent.Result, error) {
			paid.Add(1)
			return agent.TextResult("paid"), nil
		})
	model := llm.Model(llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		if len(testkit.LastToolResults(req)) > 0 {
			return llm.Say("done: " + testkit.LastToolResults(req)[0].Content)
		}
		return llm.Calls(llm.CallTool("c1", "pay", map[string]any{"amount": 5}))
	})))
	a, err := agent.New(ctx, agent.Config{Name: "payer", Model: model, Tools: []agent.Tool{pay},
		Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "pay", Permission: agent.Ask}}},
		Durable:     agent.Durable(st, -1)})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestAnswerAfterRestarts: a run parks on a permission question; its
// process stops and the NATS server with it; another process (with no
// agent) answers on the bus after the server restarted, and stops; the
// server restarts again and a new process serving the agent receives the
// answer and resumes the run, which runs the tool once and finishes.
func TestAnswerAfterRestarts(t *testing.T) {
	dir := t.TempDir()
	ctx := ctxT(t, 60*time.Second)
	open := func() (*bus.Bus, agent.Store) {
		b, err := bus.New(ctx, bus.Config{StoreDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		s, err := store.OpenAgent(ctx, b, store.AgentConfig{})
		if err != nil {
			b.Close()
			t.Fatal(err)
		}
		return b, s
	}
	var paid atomic.Int64

	// Process 1 parks the run.
	b1, st1 := open()
	a1 := parkingAgent(t, ctx, st1, &paid)
	ans, err := a1.NewSession().Run(ctx, "pay 5")
	if !errors.Is(err, failure.Parked) || ans == nil || ans.Question == "" {
		t.Fatalf("the run did not park: %+v, %v", ans, err)
	}
	run := ans.Run
	inbox, err := a1.Inbox(ctx)
	if err != nil || len(inbox) != 1 || inbox[0].ID != ans.Question {
		t.Fatalf("inbox = %+v, %v", inbox, err)
	}
	b1.Close()

	// Process 2 answers from the inbox it reads in the store.
	b2, st2 := open()
	pending, err := st2.PendingQuestions(ctx)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending after a restart: %+v, %v", pending, err)
	}
	if err := b2.Answer(ctx, &pending[0], agent.ElicitationResult{Action: agent.ElicitAccept}); err != nil {
		t.Fatal(err)
	}
	if err := b2.Answer(ctx, &pending[0], agent.ElicitationResult{Action: agent.ElicitDecline}); !errors.Is(err, failure.Conflict) {
		t.Errorf("a second answer: %v, want Conflict", err)
	}
	b2.Close()
	if paid.Load() != 0 {
		t.Fatal("the tool ran before its answer was applied")
	}

	// Process 3 serves the agent: the answer resumes the run.
	b3, st3 := open()
	defer b3.Close()
	a3 := parkingAgent(t, ctx, st3, &paid)
	srv, err := b3.ServeAnswers(ctx, a3, st3)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var cp *agent.Checkpoint
	testkit.WaitFor(t, 20*time.Second, "the run's end after its answer", func() bool {
		cp, _ = st3.LoadCheckpoint(ctx, run)
		return cp != nil && cp.State == "done"
	})
	if cp.Answer == nil || !strings.Contains(cp.Answer.Text, "paid") || paid.Load() != 1 {
		t.Errorf("the resumed run: answer %+v, paid %d times", cp.Answer, paid.Load())
	}
	sess, err := st3.LoadSession(ctx, cp.Session)
	if err != nil {
		t.Fatal(err)
	}
	checkHistory(t, sess.History)
	if inbox, _ := a3.Inbox(ctx); len(inbox) != 0 {
		t.Errorf("the inbox after the answer: %+v", inbox)
	}
}

// checkHistory fails unless every tool call in h has exactly one result,
// in the tool message right after its assistant message.
func checkHistory(t *testing.T, h []llm.Message) {
	t.Helper()
	for i, m := range h {
		if len(m.ToolCalls) == 0 {
			continue
		}
		if i+1 >= len(h) || h[i+1].Role != llm.RoleTool {
			t.Fatalf("message %d's tool calls have no tool message after them", i)
		}
		got := map[string]int{}
		for _, r := range h[i+1].ToolResults {
			got[r.CallID]++
		}
		for _, c := range m.ToolCalls {
			if got[c.ID] != 1 {
				t.Fatalf("call %s of message %d has %d results", c.ID, i, got[c.ID])
			}
		}
		if len(h[i+1].ToolResults) != len(m.ToolCalls) {
			t.Fatalf("message %d: %d calls, %d results", i, len(m.ToolCalls), len(h[i+1].ToolResults))
		}
	}
}
