package worker_test

import (
	"bytes"
	"errors"
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
