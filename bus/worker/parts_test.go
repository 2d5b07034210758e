package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus/worker"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestInputPartsReachWorker: the media of a run's Input travel with the
// start request and reach the remote run's first message; an input too
// large for the bus's messages is refused as InvalidArgs before it is sent.
func TestInputPartsReachWorker(t *testing.T) {
	c := newCluster(t)
	step := newStep(t, newProbe())
	serve(t, c.client("worker"), step, worker.ServeConfig{ID: "w1"})
	pool := newPool(t, c.host, "step", worker.PoolConfig{})

	img := llm.ImagePart("image/png", bytes.Repeat([]byte{0x89}, 10_000))
	ctx := agent.WithInput(ctxT(t, 20*time.Second), agent.Input{Parts: []llm.Part{img}})
	if _, err := events(pool.Stream(ctx, "work hello")); err != nil {
		t.Fatal(err)
	}
	hist := step.next(t).hist
	if len(hist) == 0 || len(hist[0].Parts) != 1 || !bytes.Equal(hist[0].Parts[0].Data, img.Data) || hist[0].Parts[0].MediaType != "image/png" {
		t.Fatalf("the remote run's first message is %+v", hist[0])
	}

	huge := llm.ImagePart("image/png", make([]byte, 4<<20))
	ctx = agent.WithInput(ctxT(t, 20*time.Second), agent.Input{Parts: []llm.Part{huge}})
	_, err := events(pool.Stream(ctx, "work hello"))
	if !errors.Is(err, failure.InvalidArgs) {
		t.Fatalf("an input over the max payload: %v, want InvalidArgs", err)
	}
}

// inputProbe is a Runner that sends the Input its run's context carries.
type inputProbe struct{ got chan agent.Input }

func (p *inputProbe) Name() string        { return "probe" }
func (p *inputProbe) Description() string { return "Reports its input." }
func (p *inputProbe) Stream(ctx context.Context, input string) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		in, _ := agent.InputFrom(ctx)
		p.got <- in
		yield(agent.Event{Type: agent.EventFinal, Text: "ok"}, nil)
	}
}

// TestInputReachesWorker: a run's Input instructions and conversation
// travel with the start request; its Tools (functions of the caller's
// process) do not.
func TestInputReachesWorker(t *testing.T) {
	c := newCluster(t)
	probe := &inputProbe{got: make(chan agent.Input, 1)}
	serve(t, c.client("worker"), probe, worker.ServeConfig{ID: "w1"})
	pool := newPool(t, c.host, "probe", worker.PoolConfig{})
	tool := agent.NewFuncTool(agent.ToolSpec{Name: "local", InputSchema: []byte(`{"type":"object"}`)},
		func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult("x"), nil })
	ctx := agent.WithInput(ctxT(t, 20*time.Second), agent.Input{Instructions: "Answer in French.", Conversation: "thread-3", Tools: []agent.Tool{tool}})
	if _, err := events(pool.Stream(ctx, "hello")); err != nil {
		t.Fatal(err)
	}
	select {
	case in := <-probe.got:
		if in.Instructions != "Answer in French." || in.Conversation != "thread-3" || len(in.Tools) != 0 {
			t.Fatalf("the worker's run got %+v", in)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the worker's run did not start")
	}
}
