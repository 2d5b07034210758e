package agent_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// firstPrompt runs one turn of an agent over 20 servers of 20 tools (the
// reference servers' real tools) in a 200K window and returns the tokens of
// the request the model got and its breakdown.
func firstPrompt(t testing.TB, ctx agent.ContextConfig) (seen, *agent.ContextInfo) {
	rec := &recorder{inner: llm.NewScripted(llm.Say("done"))}
	ctx.Window = 200_000
	a := newAgent(t, agent.Config{Model: rec, Instructions: "You are an operations agent.", Toolsets: serverTools(t, 20, 20, nil), Context: ctx})
	evs, err := collect(t, a.Stream(testkit.Ctx(t, 10*time.Second), "Find the tool that adds two numbers."))
	if err != nil {
		t.Fatal(err)
	}
	return rec.turns()[0], turnInfos(evs)[0]
}

// TestToolSearchPromptRatio is the arithmetic of BenchmarkToolSearchPrompt,
// counted on the requests the model received: with tool search the first
// request carries 1 tool definition instead of 400, and at most 15% of the
// tokens.
func TestToolSearchPromptRatio(t *testing.T) {
	all, allInfo := firstPrompt(t, agent.ContextConfig{DeferShare: -1})
	search, searchInfo := firstPrompt(t, agent.ContextConfig{})
	if len(all.tools) != 400 || len(search.tools) != 1 || search.tools[0] != "search_tools" {
		t.Fatalf("tools sent: %d without search, %v with", len(all.tools), search.tools)
	}
	if allInfo.ToolsDeferred != 0 || searchInfo.ToolsDeferred != 400 {
		t.Errorf("deferred: %d and %d, want 0 and 400", allInfo.ToolsDeferred, searchInfo.ToolsDeferred)
	}
	for _, c := range []struct {
		s    seen
		info *agent.ContextInfo
	}{{all, allInfo}, {search, searchInfo}} {
		if d := c.info.Prompt - c.s.tokens; d < -4 || d > 4 {
			t.Errorf("breakdown %d tokens, request %d", c.info.Prompt, c.s.tokens)
		}
	}
	ratio := float64(search.tokens) / float64(all.tokens)
	t.Logf("first request: %d tokens with every tool, %d with tool search: %.1f%%", all.tokens, search.tokens, 100*ratio)
	if ratio > 0.15 {
		t.Errorf("with tool search the first request has %.1f%% of the tokens, want at most 15%%", 100*ratio)
	}
}

// BenchmarkToolSearchPrompt: the first request's tokens with 400 tools, all
// defined (the baseline) and behind tool search, measured in the same run.
func BenchmarkToolSearchPrompt(b *testing.B) {
	var all, search seen
	var tAll, tSearch time.Duration
	for b.Loop() {
		start := time.Now()
		all, _ = firstPrompt(b, agent.ContextConfig{DeferShare: -1})
		tAll += time.Since(start)
		start = time.Now()
		search, _ = firstPrompt(b, agent.ContextConfig{})
		tSearch += time.Since(start)
	}
	b.ReportMetric(float64(all.tokens), "tokens-all")
	b.ReportMetric(float64(search.tokens), "tokens-search")
	b.ReportMetric(float64(search.tokens)/float64(all.tokens), "search/all")
	b.ReportMetric(float64(tSearch)/float64(tAll), "time-search/all")
}

// searchRun is one run of two turns of a's script on the deferred 400
// tools (a tool call, then the answer). It returns the call's result.
func searchRun(t testing.TB, a *agent.Agent) string {
	s := a.NewSession()
	if _, err := s.Run(testkit.Ctx(t, 10*time.Second), "go"); err != nil {
		t.Fatal(err)
	}
	return lastResults(s.History())[0].Content
}

// searchAgents are two agents over the same 400 deferred tools (and the
// pinned local "add"): one whose model searches, one whose model calls
// "add".
func searchAgents(t testing.TB) (withSearch, baseline *agent.Agent) {
	sets := serverTools(t, 20, 20, nil)
	cfg := agent.ContextConfig{Window: 200_000, Pinned: []string{"add"}}
	searchStep := llm.Calls(llm.CallTool("c1", "search_tools", map[string]string{"query": "create relations"}))
	addStep := llm.Calls(llm.CallTool("c1", "add", benchArgs))
	withSearch = newAgent(t, agent.Config{Model: llm.NewCyclic(searchStep, llm.Say("done")), Toolsets: sets, Tools: []agent.Tool{benchTool()}, Context: cfg})
	baseline = newAgent(t, agent.Config{Model: llm.NewCyclic(addStep, llm.Say("done")), Toolsets: sets, Tools: []agent.Tool{benchTool()}, Context: cfg})
	return withSearch, baseline
}

// TestSearchTurnCounts is the arithmetic of BenchmarkSearchTurn: each run
// of the search agent really searched (five tools found, the best first),
// and each baseline run really called the pinned tool.
func TestSearchTurnCounts(t *testing.T) {
	withSearch, baseline := searchAgents(t)
	for range 3 {
		res := searchRun(t, withSearch)
		if n := strings.Count(res, `"name":`); n != 5 || !strings.Contains(res, "create_relations") {
			t.Fatalf("search result has %d tools: %s", n, res)
		}
		if res := searchRun(t, baseline); !strings.Contains(res, "3") || strings.Contains(res, `"tools"`) {
			t.Fatalf("baseline result: %s", res)
		}
	}
}

// BenchmarkSearchTurn: what a search over 400 tools adds to a turn. Both
// agents run the same two-turn run over the same deferred tools; one turn
// calls the search tool, the baseline's calls a trivial pinned tool.
// "search-added-ms" is the difference per run.
func BenchmarkSearchTurn(b *testing.B) {
	withSearch, baseline := searchAgents(b)
	var tS, tB time.Duration
	for b.Loop() {
		start := time.Now()
		searchRun(b, baseline)
		tB += time.Since(start)
		start = time.Now()
		searchRun(b, withSearch)
		tS += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tB)/n/1e6, "baseline-ms/run")
	b.ReportMetric(float64(tS)/n/1e6, "search-ms/run")
	b.ReportMetric(float64(tS-tB)/n/1e6, "search-added-ms")
	b.ReportMetric(float64(tS)/float64(tB), "search/baseline")
}

// BenchmarkLongSession200: the 200-turn scripted session of
// TestLongSessionCompaction in a 16K window, against the same session with
// compaction off (in a window big enough to hold it): the largest request
// of each, and their ratio.
func BenchmarkLongSession200(b *testing.B) {
	const runs, per = 10, 20
	size := func(n int) int { return 300 + (n*7919)%5000 }
	session := func(ctx agent.ContextConfig) (maxTok, maxAfter, compactions int) {
		rec := &recorder{inner: llm.NewScripted(longScript(runs, per)...)}
		a := newAgent(b, agent.Config{Model: rec, Tools: []agent.Tool{sizedTool(size)}, Context: ctx, Budget: agent.Budget{MaxTurns: per}})
		s := a.NewSession()
		for r := range runs {
			evs, err := collect(b, s.Stream(testkit.Ctx(b, 30*time.Second), fmt.Sprintf("read part %d", r)))
			if err != nil {
				b.Fatal(err)
			}
			for _, info := range turnInfos(evs) {
				if info.Compacted != nil {
					compactions++
					maxAfter = max(maxAfter, info.Prompt)
				}
			}
		}
		for _, tr := range rec.turns() {
			maxTok = max(maxTok, tr.tokens)
		}
		return maxTok, maxAfter, compactions
	}
	var on, off, after, comps int
	var tOn, tOff time.Duration
	for b.Loop() {
		start := time.Now()
		off, _, _ = session(agent.ContextConfig{Window: 1_000_000, CompactShare: -1})
		tOff += time.Since(start)
		start = time.Now()
		on, after, comps = session(agent.ContextConfig{Window: 16_000})
		tOn += time.Since(start)
	}
	b.ReportMetric(float64(off), "max-tokens-uncompacted")
	b.ReportMetric(float64(on), "max-tokens-compacted")
	b.ReportMetric(float64(on)/16_000, "max/window")
	b.ReportMetric(float64(after)/(0.8*16_000), "max-after-compaction/threshold")
	b.ReportMetric(float64(comps), "compactions")
	b.ReportMetric(float64(on)/float64(off), "compacted/uncompacted")
	b.ReportMetric(float64(tOn)/float64(tOff), "time-compacted/uncompacted")
}
