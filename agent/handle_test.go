package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// dieAfterHandle is a store whose process dies once a call's handle is
// recorded: that write succeeds, every later one fails, and the run's
// context ends.
type dieAfterHandle struct {
	agent.Store
	dead atomic.Bool
	kill context.CancelFunc
}

func (d *dieAfterHandle) write(do func() error) error {
	if d.dead.Load() {
		return errKilled
	}
	return do()
}

func (d *dieAfterHandle) died(c *agent.CallRecord, err error) error {
	if err == nil && len(c.Handle) > 0 && d.dead.CompareAndSwap(false, true) {
		d.kill()
	}
	return err
}

func (d *dieAfterHandle) PutIntent(ctx context.Context, c *agent.CallRecord) error {
	return d.died(c, d.write(func() error { return d.Store.PutIntent(ctx, c) }))
}

func (d *dieAfterHandle) PutCallHandle(ctx context.Context, c *agent.CallRecord) error {
	return d.died(c, d.write(func() error { return d.Store.PutCallHandle(ctx, c) }))
}

func (d *dieAfterHandle) PutCallResult(ctx context.Context, c *agent.CallRecord) error {
	return d.write(func() error { return d.Store.PutCallResult(ctx, c) })
}

func (d *dieAfterHandle) SaveCheckpoint(ctx context.Context, cp *agent.Checkpoint, expect uint64) (rev uint64, err error) {
	err = d.write(func() error { rev, err = d.Store.SaveCheckpoint(ctx, cp, expect); return err })
	return rev, err
}

func (d *dieAfterHandle) AppendSession(ctx context.Context, rec *agent.SessionRecord, expect uint64) (rev uint64, err error) {
	err = d.write(func() error { rev, err = d.Store.AppendSession(ctx, rec, expect); return err })
	return rev, err
}

// TestCallHandle: a call that records a handle on its far-side work
// (Call.SaveHandle) and whose process dies before its result is not in
// doubt on resume: the tool runs again with Call.Handle, once, and its
// result is recorded with the intent. A read-only tool's call gets an
// intent for it. Outside a durable run SaveHandle records nothing.
func TestCallHandle(t *testing.T) {
	for _, c := range []struct {
		name     string
		readOnly bool
	}{{"side effect", false}, {"read-only", true}} {
		t.Run(c.name, func(t *testing.T) {
			var starts, resumes atomic.Int32
			var resumedWith atomic.Value
			job := agent.NewFuncTool(agent.ToolSpec{Name: "job", ReadOnly: c.readOnly},
				func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
					call, _ := agent.CallFromContext(ctx)
					if h := call.Handle(); h != nil {
						resumes.Add(1)
						resumedWith.Store(string(h))
						return agent.TextResult("job done"), nil
					}
					starts.Add(1)
					if err := call.SaveHandle(ctx, json.RawMessage(`{"job":"j1"}`)); err != nil {
						return nil, err
					}
					<-ctx.Done() // the process dies while the job goes on
					return nil, ctx.Err()
				})
			base := agent.NewMemoryStore(agent.MemoryStoreOptions{})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			runCtx, kill := context.WithCancel(ctx)
			dying := &dieAfterHandle{Store: base, kill: kill}
			script := llm.Calls(llm.ToolCall{ID: "c1", Name: "job", Args: json.RawMessage(`{}`)})
			first, err := agent.New(ctx, agent.Config{Name: "a", Model: llm.NewScripted(script, llm.Say("no")), Tools: []agent.Tool{job},
				Permissions: agent.AllowAll(), Durable: agent.Durable(dying, 0)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := first.Run(runCtx, "go"); err == nil {
				t.Fatal("the dead process's run finished")
			}
			runs, err := base.ListRuns(ctx)
			if err != nil || len(runs) != 1 {
				t.Fatalf("runs %v, %v", runs, err)
			}
			var ev events
			second, err := agent.New(ctx, agent.Config{Name: "a", Model: llm.NewScripted(llm.Say("finished")), Tools: []agent.Tool{job},
				Permissions: agent.AllowAll(), Durable: agent.Durable(base, 0), Events: &ev})
			if err != nil {
				t.Fatal(err)
			}
			ans, err := second.Resume(ctx, runs[0])
			if err != nil {
				t.Fatal(err)
			}
			if ans.Text != "finished" || starts.Load() != 1 || resumes.Load() != 1 || resumedWith.Load() != `{"job":"j1"}` {
				t.Errorf("answer %q, %d starts, %d resumes with %v", ans.Text, starts.Load(), resumes.Load(), resumedWith.Load())
			}
			if n := len(ev.failures(failure.InDoubt)); n != 0 {
				t.Errorf("%d calls in doubt", n)
			}
			calls, _ := base.LoadCalls(ctx, runs[0])
			if len(calls) != 1 || calls[0].Result == nil || !strings.Contains(calls[0].Result.Content, "job done") {
				t.Errorf("call records %+v", calls)
			}
		})
	}

	t.Run("outside a durable run", func(t *testing.T) {
		var call *agent.Call
		if err := call.SaveHandle(context.Background(), json.RawMessage(`1`)); err != nil || call.Handle() != nil {
			t.Errorf("SaveHandle %v, Handle %s", err, call.Handle())
		}
		job := agent.NewFuncTool(agent.ToolSpec{Name: "job"}, func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			c, _ := agent.CallFromContext(ctx)
			if err := c.SaveHandle(ctx, json.RawMessage(`1`)); err != nil {
				return nil, err
			}
			return agent.TextResult("ok"), nil
		})
		a, err := agent.New(context.Background(), agent.Config{Name: "a", Tools: []agent.Tool{job}, Permissions: agent.AllowAll(),
			Model: llm.NewScripted(llm.Calls(llm.ToolCall{ID: "c1", Name: "job", Args: json.RawMessage(`{}`)}), llm.Say("done"))})
		if err != nil {
			t.Fatal(err)
		}
		if ans, err := a.Run(context.Background(), "go"); err != nil || ans.Text != "done" {
			t.Errorf("%v, %v", ans, err)
		}
	})
}
