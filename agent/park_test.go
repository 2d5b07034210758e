package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// parkAgent is an agent whose pay tool needs a person's approval, with
// parking configured by d and the elicitor el.
func parkAgent(t *testing.T, st agent.Store, l *ledger, el agent.Elicitor, sink agent.EventSink, d agent.Durability) *agent.Agent {
	t.Helper()
	d.Sessions, d.Runs, d.Inbox = st, st, st
	a, err := agent.New(context.Background(), agent.Config{Name: "parker", Tools: durableTools(l), Elicitor: el, Events: sink,
		Model:       &planModel{final: "finished", steps: [][]llm.ToolCall{{call("p1", "pay", 1), call("l1", "look", 1)}}},
		Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "pay", Permission: agent.Ask}, {Tool: "*", Permission: agent.Allow}}},
		Policy:      testkit.FastPolicy(failure.PolicyConfig{}), Durable: d})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A permission ask parks the run: the question is stored with its
// deadline, the run returns Parked, and an answer given to a recreated
// agent resumes the run where it stopped: accept runs the call, decline
// gives the model Declined, an expired question gives it a Timeout. Each
// case runs on synctest's clock (the store, model and tools are in memory):
// the question's TTL and the guard pool's idle timeout pass exactly.
func TestParkedQuestion(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answer  agent.ElicitAction
		expire  bool
		paid    int
		inModel string
	}{
		{name: "accepted", answer: agent.ElicitAccept, paid: 1, inModel: "pay ok"},
		{name: "declined", answer: agent.ElicitDecline, paid: 0, inModel: "declined"},
		{name: "expired", expire: true, paid: 0, inModel: "timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := testkit.Ctx(t, 20*time.Second)
				st := agent.NewMemoryStore(agent.MemoryStoreOptions{})
				l := newLedger()
				d := agent.Durability{ParkAfter: -1, QuestionTTL: time.Hour}
				if tc.expire {
					d.QuestionTTL = time.Second
				}
				a1 := parkAgent(t, st, l, nil, nil, d)
				s1 := a1.NewSession()
				before := runtime.NumGoroutine()
				ans, err := s1.Run(ctx, "pay it")
				if !errors.Is(err, failure.Parked) || ans == nil || ans.Question == "" {
					t.Fatalf("run: %v, %+v; want Parked with a question", err, ans)
				}
				// Nothing waits for the answer: the run's goroutines end (the
				// guard pool's idle workers within guardIdle).
				testkit.WaitFor(t, 2*time.Second, "the run's goroutines to end after parking", func() bool { return runtime.NumGoroutine() <= before })
				if l.count(ans.Run+"/l1") != 1 || l.count(ans.Run+"/p1") != 0 {
					t.Fatalf("before the answer: look ran %d times, pay %d", l.count(ans.Run+"/l1"), l.count(ans.Run+"/p1"))
				}
				cp, err := st.LoadCheckpoint(ctx, ans.Run)
				if err != nil || cp.State != "parked" || cp.Question != ans.Question || len(cp.Results) != 1 {
					t.Fatalf("checkpoint %+v, %v", cp, err)
				}

				// The agent is recreated (another process): the inbox shows the
				// question, and an answer resumes the run.
				sink := &events{}
				a2 := parkAgent(t, st, l, nil, sink, d)
				inbox, err := a2.Inbox(ctx)
				if err != nil || len(inbox) != 1 || inbox[0].ID != ans.Question || inbox[0].Elicitation.Tool != "pay" ||
					inbox[0].Elicitation.Kind != agent.ElicitPermission || inbox[0].Run != ans.Run || inbox[0].Session != s1.ID() {
					t.Fatalf("inbox: %+v, %v", inbox, err)
				}
				// Resuming before an answer parks again at once.
				if _, err := a2.Resume(ctx, ans.Run); !errors.Is(err, failure.Parked) {
					t.Fatalf("resume before the answer: %v", err)
				}
				var final *agent.Answer
				if tc.expire {
					time.Sleep(time.Until(inbox[0].Deadline) + time.Millisecond) // the fake clock
					_, err := a2.Answer(ctx, ans.Question, agent.ElicitationResult{Action: agent.ElicitAccept})
					if !errors.Is(err, failure.Timeout) {
						t.Fatalf("an answer after the deadline: %v", err)
					}
					final, err = a2.Resume(ctx, ans.Run)
					if err != nil {
						t.Fatal(err)
					}
				} else {
					final, err = a2.Answer(ctx, ans.Question, agent.ElicitationResult{Action: tc.answer})
					if err != nil {
						t.Fatal(err)
					}
					if _, err := a2.Answer(ctx, ans.Question, agent.ElicitationResult{Action: tc.answer}); !errors.Is(err, failure.Conflict) {
						t.Fatalf("a second answer: %v", err)
					}
				}
				if final.Text != "finished" || final.Run != ans.Run {
					t.Fatalf("final %+v", final)
				}
				if got := l.count(ans.Run + "/p1"); got != tc.paid {
					t.Fatalf("pay ran %d times, want %d", got, tc.paid)
				}
				if got := l.count(ans.Run + "/l1"); got != 1 {
					t.Fatalf("look ran %d times across the park", got)
				}
				rec, _ := st.LoadSession(ctx, s1.ID())
				checkHistory(t, rec.History)
				if r := results(rec.History)["p1"]; !strings.Contains(strings.ToLower(r.Content), tc.inModel) {
					t.Fatalf("the model saw %q, want %q", r.Content, tc.inModel)
				}
				if inbox, _ := a2.Inbox(ctx); len(inbox) != 0 {
					t.Fatalf("inbox after: %+v", inbox)
				}
				// The bubble ends once its goroutines have: the guard pool's idle
				// workers exit after their idle timeout.
				testkit.WaitFor(t, 2*time.Second, "the guard pools' workers to exit", func() bool {
					return agent.GuardWorkers(a1) == 0 && agent.GuardWorkers(a2) == 0
				})
			})
		})
	}
}

// With a grace time the Elicitor is asked first: an answer within it runs
// the call without parking; an Elicitor that does not answer in time is
// cancelled and the run parks. It runs on synctest's clock: the quick
// answer is within the 50 ms grace however slow the machine.
func TestParkAfterGrace(t *testing.T) { synctest.Test(t, testParkAfterGrace) }

func testParkAfterGrace(t *testing.T) {
	ctx := testkit.Ctx(t, 20*time.Second)
	quick := agent.ElicitorFunc(func(context.Context, agent.Elicitation) (agent.ElicitationResult, error) {
		return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
	})
	returned := make(chan error, 1)
	silent := agent.ElicitorFunc(func(ctx context.Context, _ agent.Elicitation) (agent.ElicitationResult, error) {
		<-ctx.Done()
		returned <- ctx.Err()
		return agent.ElicitationResult{}, ctx.Err()
	})
	d := agent.Durability{ParkAfter: 50 * time.Millisecond}

	l := newLedger()
	a1 := parkAgent(t, agent.NewMemoryStore(agent.MemoryStoreOptions{}), l, quick, nil, d)
	ans, err := a1.Run(ctx, "pay")
	if err != nil || ans.Question != "" || l.count(ans.Run+"/p1") != 1 {
		t.Fatalf("an answer within the grace time: %v %+v", err, ans)
	}

	st := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	t0 := time.Now()
	a2 := parkAgent(t, st, l, silent, nil, d)
	ans, err = a2.Run(ctx, "pay")
	if !errors.Is(err, failure.Parked) || time.Since(t0) < 50*time.Millisecond {
		t.Fatalf("no answer within the grace time: %v after %s", err, time.Since(t0))
	}
	select {
	case <-returned:
	case <-time.After(time.Second):
		t.Fatal("the elicitor's wait was not cancelled when the run parked")
	}
	a3 := parkAgent(t, st, l, silent, nil, d)
	final, err := a3.Answer(ctx, ans.Question, agent.ElicitationResult{Action: agent.ElicitAccept})
	if err != nil || final.Text != "finished" || l.count(ans.Run+"/p1") != 1 {
		t.Fatalf("after the answer: %v %+v", err, final)
	}
	testkit.WaitFor(t, 2*time.Second, "the guard pools' workers to exit", func() bool {
		return agent.GuardWorkers(a1) == 0 && agent.GuardWorkers(a2) == 0 && agent.GuardWorkers(a3) == 0
	})
}

// Resuming and answering check what they are given.
func TestDurableEntryPointErrors(t *testing.T) {
	ctx := testkit.Ctx(t, 10*time.Second)
	plain, err := agent.New(ctx, agent.Config{Model: &planModel{final: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"resume without a store": func() error { _, err := plain.Resume(ctx, "run_x"); return err }(),
		"inbox without a store":  func() error { _, err := plain.Inbox(ctx); return err }(),
		"open without a store":   func() error { _, err := plain.OpenSession(ctx, "s"); return err }(),
	} {
		if !errors.Is(err, failure.Config) {
			t.Errorf("%s: %v, want Config", name, err)
		}
	}
	if _, err := agent.New(ctx, agent.Config{Model: &planModel{}, Durable: agent.Durability{ParkAfter: time.Second}}); !errors.Is(err, failure.Config) {
		t.Errorf("parking without a store: %v", err)
	}
	st := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	a := parkAgent(t, st, newLedger(), nil, nil, agent.Durability{ParkAfter: -1})
	if _, err := a.Resume(ctx, "run_missing"); !errors.Is(err, failure.NotFound) {
		t.Errorf("resume of a missing run: %v", err)
	}
	if _, err := a.OpenSession(ctx, ""); !errors.Is(err, failure.InvalidArgs) {
		t.Errorf("open of an empty id: %v", err)
	}
	ans, err := a.Run(ctx, "pay")
	if !errors.Is(err, failure.Parked) {
		t.Fatal(err)
	}
	if _, err := a.Answer(ctx, ans.Question, agent.ElicitationResult{Action: "maybe"}); !errors.Is(err, failure.InvalidArgs) {
		t.Errorf("an answer with a bad action: %v", err)
	}
	other := durableAgent(t, st, &planModel{final: "x"}, newLedger(), nil, agent.Durability{})
	if _, err := other.Resume(ctx, ans.Run); !errors.Is(err, failure.Config) {
		t.Errorf("another agent resuming the run: %v", err)
	}
	if _, err := other.Answer(ctx, ans.Question, agent.ElicitationResult{Action: agent.ElicitAccept}); !errors.Is(err, failure.InvalidArgs) {
		t.Errorf("another agent answering: %v", err)
	}
	if inbox, _ := other.Inbox(ctx); len(inbox) != 0 {
		t.Errorf("another agent's inbox: %+v", inbox)
	}
	if _, err := a.Answer(ctx, "q_missing", agent.ElicitationResult{Action: agent.ElicitAccept}); !errors.Is(err, failure.NotFound) {
		t.Errorf("an answer to a missing question: %v", err)
	}
}

// A read-only tool's own questions (Call.Elicit) park the run too: the
// resumed run calls the tool again and its earlier questions are answered
// from the store, in order. A side-effecting tool's question is not
// parked: it is asked as without a store (no Elicitor: declined).
func TestParkedToolQuestion(t *testing.T) {
	ctx := testkit.Ctx(t, 20*time.Second)
	var runs, payRuns atomic.Int32
	form := agent.NewFuncTool(agent.ToolSpec{Name: "form", Description: "asks twice", ReadOnly: true},
		func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			runs.Add(1)
			c, _ := agent.CallFromContext(ctx)
			var got []string
			for _, q := range []string{"name?", "city?"} {
				ans, err := c.Elicit(ctx, agent.Elicitation{Kind: agent.ElicitForm, Message: q})
				if err != nil {
					return nil, err
				}
				got = append(got, fmt.Sprint(ans.Content["v"]))
			}
			return agent.TextResult("form: " + strings.Join(got, ",")), nil
		})
	pay := agent.NewFuncTool(agent.ToolSpec{Name: "pay", Description: "asks, then pays"},
		func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			payRuns.Add(1)
			c, _ := agent.CallFromContext(ctx)
			ans, err := c.Elicit(ctx, agent.Elicitation{Kind: agent.ElicitForm, Message: "card?"})
			if err != nil {
				return nil, err
			}
			return agent.TextResult("pay: " + string(ans.Action)), nil
		})
	st := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	mk := func() *agent.Agent {
		a, err := agent.New(ctx, agent.Config{Name: "forms", Tools: []agent.Tool{form, pay}, Permissions: agent.AllowAll(),
			Model:   &planModel{final: "filled", steps: [][]llm.ToolCall{{call("f1", "form", 1), call("p1", "pay", 1)}}},
			Durable: agent.Durable(st, -1)})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	ans, err := mk().Run(ctx, "fill")
	if !errors.Is(err, failure.Parked) {
		t.Fatalf("first run: %v", err)
	}
	answers := map[string]string{"name?": "Ada", "city?": "London"}
	for round := 0; ; round++ {
		if round > 3 {
			t.Fatal("the run kept parking")
		}
		a := mk()
		inbox, err := a.Inbox(ctx)
		if err != nil || len(inbox) != 1 {
			t.Fatalf("round %d inbox: %+v %v", round, inbox, err)
		}
		q := inbox[0]
		if q.Elicitation.Call != "f1" || q.Elicitation.Kind != agent.ElicitForm {
			t.Fatalf("question %+v", q)
		}
		ans, err = a.Answer(ctx, q.ID, agent.ElicitationResult{Action: agent.ElicitAccept,
			Content: map[string]any{"v": answers[q.Elicitation.Message]}})
		if errors.Is(err, failure.Parked) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	if ans.Text != "filled" || runs.Load() != 3 || payRuns.Load() != 1 {
		t.Fatalf("answer %+v; form ran %d times, pay %d", ans, runs.Load(), payRuns.Load())
	}
	rec, _ := st.LoadSession(ctx, mustSession(t, st, ans.Run))
	checkHistory(t, rec.History)
	res := results(rec.History)
	if !strings.Contains(res["f1"].Content, "form: Ada,London") || !strings.Contains(res["p1"].Content, "pay: decline") {
		t.Fatalf("results: %q / %q", res["f1"].Content, res["p1"].Content)
	}
}

func mustSession(t *testing.T, st agent.Store, run string) string {
	t.Helper()
	cp, err := st.LoadCheckpoint(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	return cp.Session
}
