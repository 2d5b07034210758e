package agent_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestCompactionThroughBusSampler: with the bus's sampler as summariser,
// summaries go over an embedded NATS server to the sampling responder's
// model, and the summary it wrote is what the next prompt starts with.
func TestCompactionThroughBusSampler(t *testing.T) {
	ctx := testkit.Ctx(t, 30*time.Second)
	b, err := bus.New(ctx, bus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const summary = "SUMMARY-FROM-THE-BUS: chunks were read."
	summarizer := llm.NewCyclic(llm.Say(summary))
	ms, err := bus.NewModelSampler(bus.ModelSamplerConfig{Model: summarizer, Policy: agent.Allow})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := b.ServeSampling(ctx, ms, bus.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()

	rec := &recorder{inner: llm.NewScripted(longScript(1, 14)...)}
	a := newAgent(t, agent.Config{Model: rec, Tools: []agent.Tool{sizedTool(func(int) int { return 1500 })},
		Context: agent.ContextConfig{Window: 6_000, KeepRecent: 2, Summarizer: b.Sampler()}})
	evs, err := collect(t, a.Stream(ctx, "read"))
	if err != nil {
		t.Fatal(err)
	}
	summarised := 0
	for _, info := range turnInfos(evs) {
		if c := info.Compacted; c != nil && c.Summarized > 0 {
			summarised++
		}
	}
	if summarised == 0 || summarizer.Requests() != summarised {
		t.Fatalf("%d summaries in the events, %d asked of the bus's model", summarised, summarizer.Requests())
	}
	if rec.summaries() != 0 {
		t.Errorf("the agent's own model was asked for %d summaries", rec.summaries())
	}
	last := rec.turns()[len(rec.turns())-1].msgs[0]
	if !strings.Contains(last.Text, summary) || !strings.Contains(last.Text, "<conversation_summary") {
		t.Errorf("the last prompt starts with %q, not the bus's summary", last.Text)
	}
}
