package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestBusPolicy: a bus configured without a Policy handles its failures (a
// responder's malformed requests) with the process default, also one set
// after New; a Config.Policy wins over it.
func TestBusPolicy(t *testing.T) {
	t.Cleanup(func() { failure.SetDefault(nil) })
	for _, own := range []bool{false, true} {
		failure.SetDefault(nil)
		mine := &countingPolicy{Policy: failure.NewPolicy(failure.PolicyConfig{})}
		def := &countingPolicy{Policy: failure.NewPolicy(failure.PolicyConfig{})}
		cfg := bus.Config{}
		if own {
			cfg.Policy = mine
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		b, err := bus.New(ctx, cfg)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		failure.SetDefault(def)
		ms, _ := bus.NewModelSampler(bus.ModelSamplerConfig{Model: llm.NewCyclic(llm.Say("x")), Policy: agent.Allow})
		ctx = ctxT(t, 10*time.Second)
		svc, err := b.ServeSampling(ctx, ms, bus.ServeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Conn().RequestWithContext(ctx, bus.SubjectsOf(b).Sampling(), []byte(`not json`)); err != nil {
			t.Fatal(err)
		}
		_ = svc.Close()
		_ = b.Close()
		want, other := def, mine
		if own {
			want, other = mine, def
		}
		if len(want.messages()) != 1 || len(other.messages()) != 0 {
			t.Errorf("own policy %v: the default handled %d failures, Config.Policy %d; want 1 by the %s",
				own, len(def.messages()), len(mine.messages()), map[bool]string{false: "default", true: "Config.Policy"}[own])
		}
	}
}
