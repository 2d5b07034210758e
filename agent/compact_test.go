package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// sizedTool returns a result of size(n) bytes of words for {"n": n}.
func sizedTool(size func(n int) int) agent.Tool {
	return agent.NewFuncTool(agent.ToolSpec{Name: "read_chunk", Description: "Reads chunk n of the big document.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`), ReadOnly: true},
		func(_ context.Context, args json.RawMessage) (*agent.Result, error) {
			var in struct{ N int }
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "chunk %d:", in.N)
			for i := 0; b.Len() < size(in.N); i++ {
				fmt.Fprintf(&b, " word%d", (in.N*31+i)%97)
			}
			return agent.TextResult(b.String()), nil
		})
}

// longScript is runs runs of per turns each: per-1 turns that read a chunk,
// then an answer.
func longScript(runs, per int) []llm.Step {
	var steps []llm.Step
	for r := range runs {
		for j := range per - 1 {
			n := r*per + j
			steps = append(steps, llm.Calls(llm.CallTool(fmt.Sprintf("c%d", n), "read_chunk", map[string]int{"n": n})))
		}
		steps = append(steps, llm.Say(fmt.Sprintf("run %d read its chunks", r)))
	}
	return steps
}

// checkPrompt asserts what every request must be: it starts with a user
// message and every call in it has its result (and no result is orphaned).
func checkPrompt(t *testing.T, i int, msgs []llm.Message) {
	t.Helper()
	if len(msgs) == 0 || msgs[0].Role != llm.RoleUser {
		t.Fatalf("request %d does not start with a user message", i)
	}
	checkOneResultPerCall(t, msgs)
}

// TestLongSessionCompaction is a 200-turn scripted session (10 runs of 20
// turns) in a 16K window: no request passes the window, every compacted
// prompt is under the threshold, calls stay paired, the session keeps its
// whole history, and the events count what the summariser was asked.
func TestLongSessionCompaction(t *testing.T) {
	// KeepRecent 5 puts the natural cut on a tool message: the cut must
	// move to its call.
	for _, keep := range []int{0, 5} {
		t.Run(fmt.Sprintf("keep %d", keep), func(t *testing.T) { longSession(t, keep) })
	}
}

func longSession(t *testing.T, keep int) {
	const window, runs, per = 16_000, 10, 20
	rec := &recorder{inner: llm.NewScripted(longScript(runs, per)...)}
	size := func(n int) int { return 300 + (n*7919)%5000 }
	a := newAgent(t, agent.Config{Model: rec, Tools: []agent.Tool{sizedTool(size)},
		Context: agent.ContextConfig{Window: window, KeepRecent: keep}, Budget: agent.Budget{MaxTurns: per}})
	s := a.NewSession()
	var infos []*agent.ContextInfo
	for r := range runs {
		evs, err := collect(t, s.Stream(testkit.Ctx(t, 30*time.Second), fmt.Sprintf("read part %d", r)))
		if err != nil {
			t.Fatalf("run %d: %v", r, err)
		}
		infos = append(infos, turnInfos(evs)...)
	}
	turns := rec.turns()
	if len(turns) != runs*per || len(infos) != len(turns) {
		t.Fatalf("%d requests, %d turn events; want %d", len(turns), len(infos), runs*per)
	}
	st := longSessionStats(t, turns, infos, window)
	if st.compactions == 0 || st.summarised == 0 {
		t.Fatalf("no compaction in %d turns (largest prompt %d tokens)", len(turns), st.maxPrompt)
	}
	if got := rec.summaries(); got != st.summarised {
		t.Errorf("the summariser was asked %d times; the events report %d summaries", got, st.summarised)
	}
	hist := s.History()
	if len(hist) != runs*(1+2*(per-1)+1) {
		t.Errorf("the session's history has %d messages, want all %d", len(hist), runs*(1+2*(per-1)+1))
	}
	checkOneResultPerCall(t, hist)
	t.Logf("200 turns: largest prompt %d tokens (%.0f%% of the window), largest after compaction %d (threshold %d); %d compactions, %d summaries",
		st.maxPrompt, 100*float64(st.maxPrompt)/window, st.maxAfter, int(0.8*window), st.compactions, st.summarised)
}

type sessionStats struct{ maxPrompt, maxAfter, compactions, summarised int }

// longSessionStats checks each request against its breakdown and returns
// the session's figures.
func longSessionStats(t *testing.T, turns []seen, infos []*agent.ContextInfo, window int) sessionStats {
	t.Helper()
	var st sessionStats
	threshold := int(0.8 * float64(window))
	for i, tr := range turns {
		checkPrompt(t, i, tr.msgs)
		info := infos[i]
		// The breakdown is the request as sent (the parts are estimated
		// apart, so they may differ from the whole by a token or so each).
		if d := math.Abs(float64(info.Prompt - tr.tokens)); d > 0.01*float64(tr.tokens)+4 {
			t.Errorf("turn %d: breakdown says %d tokens, the request had %d", i, info.Prompt, tr.tokens)
		}
		if tr.tokens > window {
			t.Errorf("turn %d: a request of %d tokens passes the window of %d", i, tr.tokens, window)
		}
		st.maxPrompt = max(st.maxPrompt, tr.tokens)
		if c := info.Compacted; c != nil {
			st.compactions++
			if c.Summarized > 0 {
				st.summarised++
			}
			if tr.tokens > threshold {
				t.Errorf("turn %d: after compaction (%+v) the request has %d tokens, over the threshold %d", i, c, tr.tokens, threshold)
			}
			st.maxAfter = max(st.maxAfter, tr.tokens)
		} else if tr.tokens > threshold+6000 {
			t.Errorf("turn %d: %d tokens and no compaction", i, tr.tokens)
		}
	}
	return st
}

// TestCompactionElidesBigResultsFirst: when eliding the big results of old
// turns is enough, nothing is summarised; the summary comes later.
func TestCompactionElidesBigResultsFirst(t *testing.T) {
	rec := &recorder{inner: llm.NewScripted(longScript(1, 12)...)}
	// Every third result is big (8 KB), the others small.
	size := func(n int) int {
		if n%3 == 0 {
			return 8000
		}
		return 200
	}
	a := newAgent(t, agent.Config{Model: rec, Tools: []agent.Tool{sizedTool(size)},
		Context: agent.ContextConfig{Window: 10_000, KeepRecent: 2}})
	evs, err := collect(t, a.Stream(testkit.Ctx(t, 10*time.Second), "read"))
	if err != nil {
		t.Fatal(err)
	}
	var first *agent.Compaction
	for _, info := range turnInfos(evs) {
		if info.Compacted != nil {
			first = info.Compacted
			break
		}
	}
	if first == nil {
		t.Fatal("no compaction")
	}
	if first.Elided == 0 || first.Summarized != 0 {
		t.Fatalf("first compaction %+v: want big results elided and nothing summarised", first)
	}
	if rec.summaries() != 0 {
		t.Errorf("the summariser was asked %d times", rec.summaries())
	}
	// The elided results are notes in the prompt, whole in the history.
	var notes int
	for _, m := range rec.turns()[len(rec.turns())-1].msgs {
		for _, r := range m.ToolResults {
			if strings.Contains(r.Content, "was elided from the prompt") {
				notes++
			}
		}
	}
	if notes == 0 {
		t.Error("the last request has no elided result")
	}
}

// TestCompactionLoopGuard: results so big that every turn refills the
// prompt past the threshold: after three compactions in a row the guard
// stops compacting, says so, and the run ends with a Budget failure rather
// than sending a prompt that does not fit.
func TestCompactionLoopGuard(t *testing.T) {
	rec := &recorder{inner: llm.NewScripted(longScript(1, 25)...)}
	a := newAgent(t, agent.Config{Model: rec, Tools: []agent.Tool{sizedTool(func(int) int { return 5600 })},
		Context: agent.ContextConfig{Window: 4_000, KeepRecent: 2}, Budget: agent.Budget{MaxTurns: 30}})
	s := a.NewSession()
	evs, err := collect(t, s.Stream(testkit.Ctx(t, 10*time.Second), "read"))
	var fe *failure.Error
	if !errors.As(err, &fe) || fe.Kind != failure.Budget || !strings.Contains(fe.Message, "context window") {
		t.Fatalf("run error %v, want a Budget failure about the context window", err)
	}
	guards := 0
	for _, e := range eventsOf(evs, agent.EventFailure) {
		if strings.Contains(e.Failure.Message, "loop guard") {
			guards++
		}
	}
	if guards != 1 {
		t.Errorf("%d loop guard failures reported, want 1", guards)
	}
	if n := rec.summaries(); n > 3 {
		t.Errorf("the summariser was asked %d times, want at most 3", n)
	}
	for i, tr := range rec.turns() {
		if tr.tokens > 4_000 {
			t.Errorf("turn %d sent %d tokens, over the window", i, tr.tokens)
		}
		checkPrompt(t, i, tr.msgs)
	}
	checkOneResultPerCall(t, s.History())
}

// TestCompactionSummarizerFails: a failing summariser is reported, the
// compacted turns are left out of the prompt, and the run goes on.
func TestCompactionSummarizerFails(t *testing.T) {
	rec := &recorder{inner: llm.NewScripted(longScript(1, 14)...)}
	var asked atomic.Int32
	bad := testkit.SamplerFunc(func(context.Context, agent.SamplingRequest) (agent.SamplingResult, error) {
		asked.Add(1)
		return agent.SamplingResult{}, failure.New(failure.Model, failure.SourceModel, "the summariser is down")
	})
	a := newAgent(t, agent.Config{Model: rec, Tools: []agent.Tool{sizedTool(func(int) int { return 1500 })},
		Context: agent.ContextConfig{Window: 6_000, KeepRecent: 2, Summarizer: bad}})
	evs, err := collect(t, a.Stream(testkit.Ctx(t, 10*time.Second), "read"))
	if err != nil {
		t.Fatal(err)
	}
	var noted bool
	for _, info := range turnInfos(evs) {
		if c := info.Compacted; c != nil && c.Summarized > 0 && strings.Contains(c.Note, "summarising failed") {
			noted = true
		}
	}
	if !noted {
		t.Fatal("no compaction says its summary failed")
	}
	var reported bool
	for _, e := range eventsOf(evs, agent.EventFailure) {
		if e.Failure.Source == failure.SourceModel {
			reported = true
		}
	}
	if !reported {
		t.Error("the summariser's failure was not reported")
	}
	if asked.Load() == 0 || rec.summaries() != 0 {
		t.Errorf("the summariser was asked %d times, the model %d: want the summariser only", asked.Load(), rec.summaries())
	}
	for i, tr := range rec.turns() {
		checkPrompt(t, i, tr.msgs)
	}
}

// TestPromptBreakdown: turn_started reports the prompt by part, and the
// parts add up to what the model received.
func TestPromptBreakdown(t *testing.T) {
	rec := &recorder{inner: llm.NewScripted(llm.Calls(llm.CallTool("c1", "read_chunk", map[string]int{"n": 1})), llm.Say("done"))}
	skills := agent.Toolset(instructorSet{agent.NewToolset("skills"), "Skills catalog: report-writer writes reports from notes."})
	a := newAgent(t, agent.Config{Model: rec, Instructions: "You are a careful reader.", Toolsets: []agent.Toolset{skills},
		Tools: []agent.Tool{sizedTool(func(int) int { return 800 })}})
	evs, err := collect(t, a.Stream(testkit.Ctx(t, 10*time.Second), "read chunk one"))
	if err != nil {
		t.Fatal(err)
	}
	infos := turnInfos(evs)
	if len(infos) != 2 {
		t.Fatalf("%d turn_started events", len(infos))
	}
	second := infos[1]
	if second.System == 0 || second.Skills == 0 || second.Tools == 0 || second.History == 0 || second.ToolResults == 0 {
		t.Fatalf("a part is missing: %+v", second)
	}
	if sum := second.System + second.Skills + second.Tools + second.History + second.ToolResults; sum != second.Prompt {
		t.Errorf("parts add up to %d, prompt says %d", sum, second.Prompt)
	}
	if second.Window != 128_000 || second.ToolsDefined != 1 || second.Compacted != nil {
		t.Errorf("breakdown %+v: want the default window, one tool, no compaction", second)
	}
	for i, tr := range rec.turns() {
		if d := infos[i].Prompt - tr.tokens; d < -4 || d > 4 {
			t.Errorf("turn %d: breakdown %d tokens, request %d", i+1, infos[i].Prompt, tr.tokens)
		}
	}
}

type instructorSet struct {
	agent.Toolset
	text string
}

func (s instructorSet) Instructions(context.Context) string { return s.text }

// TestBreakdownAfterFailedRun: a run that fails before its first turn
// completes leaves no trace in the history; the next run's breakdown is of
// its own input, not of the dropped one at the same place.
func TestBreakdownAfterFailedRun(t *testing.T) {
	rec := &recorder{inner: llm.NewScripted(llm.Step{Err: failure.New(failure.Model, failure.SourceModel, "refused")}, llm.Say("ok"))}
	a := newAgent(t, agent.Config{Model: rec})
	s := a.NewSession()
	if _, err := s.Run(testkit.Ctx(t, 10*time.Second), strings.Repeat("long input ", 400)); err == nil {
		t.Fatal("the first run did not fail")
	}
	evs, err := collect(t, s.Stream(testkit.Ctx(t, 10*time.Second), "hi"))
	if err != nil {
		t.Fatal(err)
	}
	info, sent := turnInfos(evs)[0], rec.turns()[1]
	if d := info.Prompt - sent.tokens; d < -4 || d > 4 {
		t.Errorf("breakdown says %d tokens (history %d), the request had %d", info.Prompt, info.History, sent.tokens)
	}
}

// reporting is a model whose provider reports factor times the estimated
// input tokens (a tokenizer that counts more than the estimator).
type reporting struct {
	*recorder
	factor float64
}

func (m reporting) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	resp, err := m.recorder.Generate(ctx, req)
	if err == nil {
		resp.Usage.InputTokens = int(m.factor * float64(promptTokens(req)))
	}
	return resp, err
}

// TestEstimateFollowsReportedUsage: when the provider reports more input
// tokens than estimated, later estimates are scaled up to match, so the
// provider's count of every request stays under the window.
func TestEstimateFollowsReportedUsage(t *testing.T) {
	const window, factor = 16_000, 1.5
	rec := &recorder{inner: llm.NewScripted(longScript(3, 20)...)}
	m := reporting{rec, factor}
	a := newAgent(t, agent.Config{Model: m, Tools: []agent.Tool{sizedTool(func(n int) int { return 300 + (n*7919)%5000 })},
		Context: agent.ContextConfig{Window: window}, Budget: agent.Budget{MaxTurns: 20}})
	s := a.NewSession()
	var infos []*agent.ContextInfo
	for r := range 3 {
		evs, err := collect(t, s.Stream(testkit.Ctx(t, 30*time.Second), fmt.Sprintf("part %d", r)))
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, turnInfos(evs)...)
	}
	for i, tr := range rec.turns() {
		reported := int(factor * float64(tr.tokens))
		if reported > window {
			t.Errorf("turn %d: the provider counted %d tokens, over the window %d", i, reported, window)
		}
		if i == 0 {
			continue // nothing reported yet
		}
		if d := math.Abs(float64(infos[i].Prompt-reported)) / float64(reported); d > 0.02 {
			t.Errorf("turn %d: breakdown %d tokens, the provider's count %d", i, infos[i].Prompt, reported)
		}
	}
}

// TestUnknownWindowNeverRefuses: a model whose window is not known (the
// scripted model, no Context.Window) gets a prompt bigger than the default
// guess: the agent sends it and lets the provider decide; with the window
// configured, the same prompt is refused with a Budget failure.
func TestUnknownWindowNeverRefuses(t *testing.T) {
	big := strings.Repeat("all work and no play ", 40_000) // about 160K tokens
	for _, tc := range []struct {
		name   string
		window int
		refuse bool
	}{{"unknown window", 0, false}, {"known window", 128_000, true}} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{inner: llm.NewScripted(llm.Say("read it"))}
			a := newAgent(t, agent.Config{Model: rec, Context: agent.ContextConfig{Window: tc.window}})
			_, err := a.Run(testkit.Ctx(t, 30*time.Second), big)
			if tc.refuse {
				var fe *failure.Error
				if !errors.As(err, &fe) || fe.Kind != failure.Budget || len(rec.turns()) != 0 {
					t.Fatalf("err %v after %d requests: want a Budget failure and no request", err, len(rec.turns()))
				}
				return
			}
			if err != nil || len(rec.turns()) != 1 {
				t.Fatalf("err %v after %d requests: want the request sent", err, len(rec.turns()))
			}
		})
	}
}
