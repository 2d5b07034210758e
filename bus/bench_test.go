package bus_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// rawProgress is what a raw nats.go client would send: the same JSON.
type rawProgress struct {
	V        int     `json:"v"`
	Run      string  `json:"run"`
	Call     string  `json:"call,omitempty"`
	Token    string  `json:"token,omitempty"`
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// BenchmarkProgressPublishToDelivery publishes one progress report and
// waits for its delivery to a subscriber, with raw nats.go (JSON by hand,
// SubscribeSync) and with the bus (ProgressPublisher, SubscribeProgress), on
// the same embedded server and stream.
func BenchmarkProgressPublishToDelivery(b *testing.B) {
	bb := newBus(b, bus.Config{Stream: bus.StreamConfig{Memory: true}})
	ctx := context.Background()
	nc := bb.Conn()
	subj := bus.SubjectsOf(bb)

	rawSub, err := nc.SubscribeSync(subj.Progress("bench_raw"))
	if err != nil {
		b.Fatal(err)
	}
	defer rawSub.Unsubscribe()
	busSub, err := bb.SubscribeProgress(ctx, "bench_bus", bus.ProgressOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer busSub.Close()
	nc.Flush()

	rawSubject := subj.Progress("bench_raw")
	raw := func(n int) {
		for i := 0; i < n; i++ {
			data, _ := json.Marshal(rawProgress{V: 1, Run: "bench_raw", Token: "t", Progress: float64(i), Total: 100, Message: "step"})
			if err := nc.Publish(rawSubject, data); err != nil {
				b.Fatal(err)
			}
			m, err := rawSub.NextMsgWithContext(ctx)
			if err != nil {
				b.Fatal(err)
			}
			var p rawProgress
			if err := json.Unmarshal(m.Data, &p); err != nil || p.V != 1 {
				b.Fatal(err)
			}
		}
	}
	pub := bus.ProgressPublisher(bb, "bench_bus")
	viaBus := func(n int) {
		for i := 0; i < n; i++ {
			if err := pub(ctx, bus.ProgressUpdate{Token: "t", Progress: float64(i), Total: 100, Message: "step"}); err != nil {
				b.Fatal(err)
			}
			if _, err := busSub.Next(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	testkit.CompareRatio(b, raw, viaBus)
}

type rawSamplingRequest struct {
	V          int                   `json:"v"`
	DeadlineMS int64                 `json:"deadline_ms,omitempty"`
	Request    agent.SamplingRequest `json:"request"`
}

type rawSamplingReply struct {
	V      int                   `json:"v"`
	Result *agent.SamplingResult `json:"result,omitempty"`
}

// BenchmarkSamplingRequestReply sends one sampling request and waits for
// the answer, with raw nats.go (QueueSubscribe, RequestWithContext, JSON by
// hand) and with the bus (ServeSampling, Sampler), answered by the same
// function on the same embedded server. "serial" handles requests one at a
// time on the subscription goroutine (raw: in the callback; bus:
// MaxConcurrent 1); "concurrent" hands each request to its own goroutine
// (raw: go in the callback; bus: the default MaxConcurrent).
func BenchmarkSamplingRequestReply(b *testing.B) {
	for _, mode := range []struct {
		name       string
		concurrent bool
		max        int
	}{{"serial", false, 1}, {"concurrent", true, 0}} {
		b.Run(mode.name, func(b *testing.B) {
			benchSampling(b, mode.concurrent, mode.max)
		})
	}
}

func benchSampling(b *testing.B, concurrent bool, maxConcurrent int) {
	bb := newBus(b, bus.Config{Stream: bus.StreamConfig{Memory: true}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	nc := bb.Conn()
	answer := func(_ context.Context, req agent.SamplingRequest) (agent.SamplingResult, error) {
		return agent.SamplingResult{Model: "echo", Text: req.Messages[0].Text, StopReason: "end_turn", Usage: llm.Usage{InputTokens: 1, OutputTokens: 1}}, nil
	}
	rawSubject := bus.SubjectsOf(bb).Prefix() + ".bench.sampling"
	handle := func(m *nats.Msg) {
		var req rawSamplingRequest
		if err := json.Unmarshal(m.Data, &req); err != nil || req.V != 1 {
			return
		}
		hctx, hcancel := context.WithDeadline(ctx, time.UnixMilli(req.DeadlineMS))
		res, _ := answer(hctx, req.Request)
		hcancel()
		data, _ := json.Marshal(rawSamplingReply{V: 1, Result: &res})
		m.Respond(data)
	}
	rawSvc, err := nc.QueueSubscribe(rawSubject, wire.QueueGroup, func(m *nats.Msg) {
		if concurrent {
			go handle(m)
		} else {
			handle(m)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer rawSvc.Unsubscribe()
	svc, err := bb.ServeSampling(ctx, testkit.SamplerFunc(answer), bus.ServeOptions{MaxConcurrent: maxConcurrent})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close()
	nc.Flush()
	req := samplingRequest("hello")
	sampler := bb.Sampler()

	raw := func(n int) {
		for i := 0; i < n; i++ {
			dl, _ := ctx.Deadline()
			data, _ := json.Marshal(rawSamplingRequest{V: 1, DeadlineMS: dl.UnixMilli(), Request: req})
			m, err := nc.RequestWithContext(ctx, rawSubject, data)
			if err != nil {
				b.Fatal(err)
			}
			var rep rawSamplingReply
			if err := json.Unmarshal(m.Data, &rep); err != nil || rep.Result == nil {
				b.Fatal(err)
			}
		}
	}
	viaBus := func(n int) {
		for i := 0; i < n; i++ {
			if _, err := sampler.Sample(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	}
	testkit.CompareRatio(b, raw, viaBus)
}
