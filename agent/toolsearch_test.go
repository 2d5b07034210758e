package agent_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestToolDeferral: tools are deferred behind the search tool exactly when
// their definitions pass the configured share of the window; pinned tools
// stay defined, in listing order after the search tool.
func TestToolDeferral(t *testing.T) {
	for _, tc := range []struct {
		name      string
		servers   int
		ctx       agent.ContextConfig
		wantAll   bool
		wantFirst []string
	}{
		{name: "400 tools in 200K: deferred", servers: 20, ctx: agent.ContextConfig{Window: 200_000},
			wantFirst: []string{"search_tools"}},
		{name: "20 tools in 200K: all defined", servers: 1, ctx: agent.ContextConfig{Window: 200_000}, wantAll: true},
		{name: "400 tools, share raised to 60%", servers: 20, ctx: agent.ContextConfig{Window: 200_000, DeferShare: 0.6}, wantAll: true},
		{name: "400 tools, deferral off", servers: 20, ctx: agent.ContextConfig{Window: 200_000, DeferShare: -1}, wantAll: true},
		{name: "20 tools in 8K: deferred", servers: 1, ctx: agent.ContextConfig{Window: 8_000},
			wantFirst: []string{"search_tools"}},
		{name: "pinned", servers: 20, ctx: agent.ContextConfig{Window: 200_000,
			Pinned: []string{"mcp__srv03__*", "mcp__srv01__add_observations"}},
			wantFirst: append([]string{"search_tools", "mcp__srv01__add_observations"}, srv03Tools(t)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{inner: llm.NewScripted(llm.Say("done"))}
			a := newAgent(t, agent.Config{Model: rec, Toolsets: serverTools(t, tc.servers, 20, nil), Context: tc.ctx})
			evs, err := collect(t, a.Stream(testkit.Ctx(t, 10*time.Second), "hi"))
			if err != nil {
				t.Fatal(err)
			}
			got := rec.turns()[0].tools
			info := turnInfos(evs)[0]
			if tc.wantAll {
				if len(got) != 20*tc.servers || info.ToolsDeferred != 0 {
					t.Fatalf("%d tools defined (%d deferred), want all %d", len(got), info.ToolsDeferred, 20*tc.servers)
				}
				return
			}
			if !slices.Equal(got, tc.wantFirst) {
				t.Fatalf("tools defined: %v, want %v", got, tc.wantFirst)
			}
			if info.ToolsDefined != len(got) || info.ToolsDeferred != 20*tc.servers-(len(got)-1) {
				t.Errorf("breakdown says %d defined, %d deferred; the request had %d", info.ToolsDefined, info.ToolsDeferred, len(got))
			}
		})
	}
}

func srv03Tools(t *testing.T) []string {
	var out []string
	ts := serverTools(t, 4, 20, nil)[3]
	tools, _ := ts.Tools(t.Context())
	for _, tl := range tools {
		out = append(out, tl.Spec().Name)
	}
	return out
}

// TestSearchThenCall: the model searches, the found tools are defined from
// the next turn (after the ones defined before, so the prefix stays), and
// the call runs.
func TestSearchThenCall(t *testing.T) {
	calls := &sync.Map{}
	steps := testkit.SearchAndCall("c1", "sum of two numbers", map[string]int{"a": 1, "b": 2})
	steps = append(steps, testkit.SearchAndCall("c2", "create entities in the knowledge graph", map[string]any{"entities": []any{}})...)
	steps = append(steps, llm.Say("done"))
	rec := &recorder{inner: llm.NewScripted(steps...)}
	a := newAgent(t, agent.Config{Model: rec, Toolsets: serverTools(t, 20, 20, calls), Context: agent.ContextConfig{Window: 200_000}})
	s := a.NewSession()
	ans, err := s.Run(testkit.Ctx(t, 10*time.Second), "add and remember")
	if err != nil {
		t.Fatal(err)
	}
	if ans.Text != "done" {
		t.Fatalf("answer %q", ans.Text)
	}
	turns := rec.turns()
	if len(turns) != 5 {
		t.Fatalf("%d turns, want 5", len(turns))
	}
	// Turn 2 defines what the first search found, turn 4 adds the second's.
	sum := calledTool(t, s.History(), "c1")
	ents := calledTool(t, s.History(), "c2")
	if !strings.HasSuffix(sum, "__get-sum") || !strings.HasSuffix(ents, "__create_entities") {
		t.Fatalf("the searches led to %s and %s", sum, ents)
	}
	if callsOf(calls, sum) != 1 || callsOf(calls, ents) != 1 {
		t.Fatalf("calls: %s %d, %s %d; want 1 each", sum, callsOf(calls, sum), ents, callsOf(calls, ents))
	}
	if slices.Contains(turns[0].tools, sum) || !slices.Contains(turns[1].tools, sum) {
		t.Errorf("%s defined in turn 1: %v, turn 2: %v; want from turn 2 on", sum, slices.Contains(turns[0].tools, sum), slices.Contains(turns[1].tools, sum))
	}
	t2, t4 := turns[1].tools, turns[3].tools
	if !slices.Equal(t4[:len(t2)], t2) {
		t.Errorf("turn 4's tools %v do not start with turn 2's %v: the prompt's prefix changed", t4, t2)
	}
	checkOneResultPerCall(t, s.History())
}

// calledTool is the tool the call with id called.
func calledTool(t *testing.T, hist []llm.Message, id string) string {
	t.Helper()
	for _, m := range hist {
		for _, c := range m.ToolCalls {
			if c.ID == id {
				return c.Name
			}
		}
	}
	t.Fatalf("no call %s in the history", id)
	return ""
}

// TestDeferredToolByExactName: a call to a deferred tool by its exact name,
// without searching first, runs it, and the tool is defined from the next
// turn (in this run and the session's next run).
func TestDeferredToolByExactName(t *testing.T) {
	calls := &sync.Map{}
	const name = "mcp__srv07__get-env"
	rec := &recorder{inner: llm.NewScripted(
		llm.Calls(llm.CallTool("c1", name, map[string]any{})),
		llm.Say("first done"),
		llm.Say("second done"),
	)}
	a := newAgent(t, agent.Config{Model: rec, Toolsets: serverTools(t, 20, 20, calls), Context: agent.ContextConfig{Window: 200_000}})
	s := a.NewSession()
	evs, err := collect(t, s.Stream(testkit.Ctx(t, 10*time.Second), "env?"))
	if err != nil {
		t.Fatal(err)
	}
	if n := callsOf(calls, name); n != 1 {
		t.Fatalf("%s ran %d times, want 1", name, n)
	}
	for _, e := range eventsOf(evs, agent.EventFailure) {
		t.Errorf("unexpected failure: %+v", e.Failure)
	}
	if _, err := s.Run(testkit.Ctx(t, 10*time.Second), "again"); err != nil {
		t.Fatal(err)
	}
	turns := rec.turns()
	if slices.Contains(turns[0].tools, name) || !slices.Contains(turns[1].tools, name) || !slices.Contains(turns[2].tools, name) {
		t.Errorf("%s defined in turns: %v %v %v; want from the second on",
			name, slices.Contains(turns[0].tools, name), slices.Contains(turns[1].tools, name), slices.Contains(turns[2].tools, name))
	}
}

// TestSearchToolBadInput: a search without a query gets an error result the
// model can act on; an unknown tool is still unknown.
func TestSearchToolBadInput(t *testing.T) {
	rec := &recorder{inner: llm.NewScripted(
		llm.Calls(llm.CallTool("c1", "search_tools", map[string]any{"limit": 3}),
			llm.CallTool("c2", "search_tools", map[string]any{"query": "zzqqxx"}),
			llm.CallTool("c3", "mcp__nowhere__nothing", map[string]any{})),
		llm.Say("ok"))}
	a := newAgent(t, agent.Config{Model: rec, Toolsets: serverTools(t, 20, 20, nil), Context: agent.ContextConfig{Window: 200_000}})
	s := a.NewSession()
	if _, err := s.Run(testkit.Ctx(t, 10*time.Second), "x"); err != nil {
		t.Fatal(err)
	}
	res := lastResults(s.History())
	if len(res) != 3 {
		t.Fatalf("%d results", len(res))
	}
	if !res[0].IsError || !strings.Contains(res[0].Content, "query") {
		t.Errorf("search without query: %+v", res[0])
	}
	if res[1].IsError || !strings.Contains(res[1].Content, "No tool matched") {
		t.Errorf("search without hits: %+v", res[1])
	}
	if !res[2].IsError || !strings.Contains(res[2].Content, "no tool named") {
		t.Errorf("unknown tool: %+v", res[2])
	}
}

// TestLoadedToolsBounded: searches that load more tools than the deferral
// share holds unload the oldest: the definitions sent stay within the
// share, and the last search's tools are defined.
func TestLoadedToolsBounded(t *testing.T) {
	const window = 40_000
	queries := []string{"entities relations graph", "thinking step session", "resource links reference", "toggle simulated logging"}
	var steps []llm.Step
	for i, q := range queries {
		steps = append(steps, llm.Calls(llm.CallTool(fmt.Sprintf("s%d", i), "search_tools", map[string]any{"query": q, "limit": 20})))
	}
	steps = append(steps, llm.Say("done"))
	rec := &recorder{inner: llm.NewScripted(steps...)}
	a := newAgent(t, agent.Config{Model: rec, Toolsets: serverTools(t, 20, 20, nil), Context: agent.ContextConfig{Window: window}})
	s := a.NewSession()
	evs, err := collect(t, s.Stream(testkit.Ctx(t, 10*time.Second), "many searches"))
	if err != nil {
		t.Fatal(err)
	}
	infos := turnInfos(evs)
	budget := int(0.10 * window)
	grew := false
	for i, info := range infos {
		if info.Tools > budget+200 { // the search tool itself is on top of the share
			t.Errorf("turn %d: %d tokens of definitions (%d tools), over the share of %d", i+1, info.Tools, info.ToolsDefined, budget)
		}
		if i > 0 && info.ToolsDefined > 30 {
			grew = true
		}
	}
	if !grew {
		t.Fatalf("the searches never loaded many tools: %d defined at the end", infos[len(infos)-1].ToolsDefined)
	}
	last := rec.turns()[len(rec.turns())-1].tools
	var found struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	res := lastResults(s.History())[0].Content
	if err := json.Unmarshal([]byte(res[strings.IndexByte(res, '\n')+1:strings.LastIndexByte(res, '\n')]), &found); err != nil || len(found.Tools) == 0 {
		t.Fatalf("last search result %q: %v", res, err)
	}
	if !slices.Contains(last, found.Tools[0].Name) {
		t.Errorf("the last search's best tool %s is not defined in the last turn", found.Tools[0].Name)
	}
}

// TestSearchToolQueriesAndServer: one search_tools call with several
// queries finds a tool for each, and one naming a server lists its tools;
// each tool found says why it matched.
func TestSearchToolQueriesAndServer(t *testing.T) {
	rec := &recorder{inner: llm.NewScripted(
		llm.Calls(llm.CallTool("c1", "search_tools", map[string]any{"queries": []string{"add observations", "sequential thinking"}, "limit": 1}),
			llm.CallTool("c2", "search_tools", map[string]any{"server": "srv03"}),
			llm.CallTool("c3", "search_tools", map[string]any{"queries": slices.Repeat([]string{"x"}, 9)})),
		llm.Say("ok"))}
	a := newAgent(t, agent.Config{Model: rec, Toolsets: serverTools(t, 20, 20, nil), Context: agent.ContextConfig{Window: 200_000}})
	s := a.NewSession()
	if _, err := s.Run(testkit.Ctx(t, 10*time.Second), "x"); err != nil {
		t.Fatal(err)
	}
	res := lastResults(s.History())
	if len(res) != 3 {
		t.Fatalf("%d results", len(res))
	}
	if res[0].IsError || strings.Count(res[0].Content, `"name":`) != 2 || !strings.Contains(res[0].Content, "add_observations") ||
		!strings.Contains(res[0].Content, `"why":"matched`) {
		t.Errorf("two queries: %+v", res[0])
	}
	if res[1].IsError || strings.Count(res[1].Content, `"name":"mcp__srv03__`) != 20 || !strings.Contains(res[1].Content, "a tool of srv03") {
		t.Errorf("server listing: %+v", res[1])
	}
	if !res[2].IsError {
		t.Errorf("nine queries: %+v", res[2])
	}
}
