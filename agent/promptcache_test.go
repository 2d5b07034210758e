package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// prefixRecorder keeps, for every request it answers, the bytes a
// provider's cache sees: the system prompt, the tool definitions and each
// message, encoded when the request was made.
type prefixRecorder struct {
	inner llm.Model
	mu    sync.Mutex
	turns []recordedTurn
}

type recordedTurn struct {
	system, tools []byte
	msgs          [][]byte
	key           string
	noCache       bool
}

func (p *prefixRecorder) Name() string { return p.inner.Name() }

func (p *prefixRecorder) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if !req.Compaction {
		rt := recordedTurn{system: []byte(req.System), key: req.CacheKey, noCache: req.NoCache}
		rt.tools, _ = json.Marshal(req.Tools)
		for _, m := range req.Messages {
			b, _ := json.Marshal(m)
			rt.msgs = append(rt.msgs, b)
		}
		p.mu.Lock()
		p.turns = append(p.turns, rt)
		p.mu.Unlock()
	}
	return p.inner.Generate(ctx, req)
}

// TestPromptPrefixStable runs 20 turns (19 of tool calls, then the answer)
// with 50 tools and checks what a provider's prompt cache depends on: the
// system prompt and the tool definitions are byte-identical at every
// turn, and each turn's messages begin with the previous turn's, byte for
// byte, except after a compaction (which rewrites the history's head), and
// every request carries the session's cache key. With a window small
// enough to compact, it counts the turns whose prefix compaction broke.
func TestPromptPrefixStable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		context agent.ContextConfig
		noCache bool
		// compactions is how many turns may follow a compaction (-1: any, at
		// least one).
		compactions int
	}{
		{name: "no compaction"},
		{name: "caching off", noCache: true},
		// A window the growing history passes: compaction rewrites the
		// head a few times, and only then.
		{name: "compacting", context: agent.ContextConfig{Window: 4_000, DeferShare: -1}, compactions: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tools []agent.Tool
			for i := range 50 {
				name := fmt.Sprintf("tool_%02d", i)
				tools = append(tools, agent.NewFuncTool(agent.ToolSpec{Name: name,
					Description: fmt.Sprintf("Tool number %d: does its own small thing.", i),
					InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
					func(_ context.Context, args json.RawMessage) (*agent.Result, error) {
						return agent.TextResult(name + " says " + strings.Repeat("ok ", 40) + string(args)), nil
					}))
			}
			var steps []llm.Step
			for i := range 19 {
				steps = append(steps, llm.Calls(llm.CallTool("", fmt.Sprintf("tool_%02d", (i*7)%50), map[string]int{"n": i})))
			}
			steps = append(steps, llm.Say("done after 19 tool turns"))
			rec := &prefixRecorder{inner: llm.NewScripted(steps...)}
			a := newAgent(t, agent.Config{Model: rec, Tools: tools, Context: tc.context, NoPromptCache: tc.noCache,
				Budget: agent.Budget{MaxTurns: 20}})
			s := a.NewSession()
			evs, err := collect(t, s.Stream(testkit.Ctx(t, 30*time.Second), "run the tools"))
			if err != nil {
				t.Fatal(err)
			}
			compacted := map[int]bool{}
			var used llm.Usage // the turns' and the summaries'
			for _, ev := range evs {
				switch {
				case ev.Type == agent.EventModelTurn:
					used = used.Add(*ev.Usage)
				case ev.Type == agent.EventTurnStarted && ev.Context != nil && ev.Context.Compacted != nil:
					compacted[ev.Turn] = true
					if c := ev.Context.Compacted; c.Summarized > 0 && (c.Usage == nil || c.Usage.Total() == 0 || c.Cost == nil) {
						t.Errorf("turn %d: a summary without its usage and cost: %+v", ev.Turn, c)
					} else if c.Usage != nil {
						used = used.Add(*c.Usage)
					}
				}
			}
			if ans := eventsOf(evs, agent.EventFinal)[0].Answer; ans.Usage != used {
				t.Errorf("the answer's usage %+v, want the turns' and summaries' %+v", ans.Usage, used)
			}
			turns := rec.turns
			if len(turns) != 20 {
				t.Fatalf("%d model turns, want 20", len(turns))
			}
			if n := len(turns[0].msgs); n != 1 {
				t.Fatalf("turn 1 sends %d messages", n)
			}
			if !bytes.Contains(turns[0].tools, []byte(`"tool_49"`)) {
				t.Fatal("not all 50 tools are defined")
			}
			breaks := 0
			for i := 1; i < len(turns); i++ {
				prev, cur := turns[i-1], turns[i]
				if !bytes.Equal(prev.system, cur.system) {
					t.Errorf("turn %d: the system prompt changed", i+1)
				}
				if !bytes.Equal(prev.tools, cur.tools) {
					t.Errorf("turn %d: the tool definitions changed", i+1)
				}
				prefix := len(cur.msgs) > len(prev.msgs)
				for j := 0; prefix && j < len(prev.msgs); j++ {
					prefix = bytes.Equal(prev.msgs[j], cur.msgs[j])
				}
				switch {
				case !prefix && !compacted[i+1]:
					t.Errorf("turn %d: its messages do not begin with turn %d's, and no compaction ran", i+1, i)
				case !prefix:
					breaks++
				}
			}
			for i, rt := range turns {
				switch {
				case tc.noCache && (rt.key != "" || !rt.noCache):
					t.Errorf("turn %d: cache key %q, NoCache %v with caching off", i+1, rt.key, rt.noCache)
				case !tc.noCache && (rt.key == "" || rt.key != turns[0].key || rt.noCache):
					t.Errorf("turn %d: cache key %q (turn 1's %q), NoCache %v", i+1, rt.key, turns[0].key, rt.noCache)
				}
			}
			switch {
			case tc.compactions == 0 && (breaks != 0 || len(compacted) != 0):
				t.Errorf("%d prefix breaks, %d compactions; want none", breaks, len(compacted))
			case tc.compactions < 0 && breaks == 0:
				t.Errorf("the window never compacted: the test no longer covers compaction")
			}
			t.Logf("%d of 19 turns kept the previous prompt as their prefix; %d compactions (turns %v)", 19-breaks, len(compacted), compacted)
		})
	}
}

// TestInputConversationIsCacheKey checks that Input.Conversation is the
// cache key of every turn of the runs it is given to, whatever their
// sessions, and that without it each session has a key of its own.
func TestInputConversationIsCacheKey(t *testing.T) {
	for _, tc := range []struct {
		name, conversation string
		same               bool
	}{
		{name: "named", conversation: "thread-7", same: true},
		{name: "unnamed", same: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &prefixRecorder{inner: llm.NewScripted(llm.Say("one"), llm.Say("two"))}
			a := newAgent(t, agent.Config{Model: rec})
			for _, in := range []string{"first", "second"} {
				ctx := agent.WithInput(context.Background(), agent.Input{Conversation: tc.conversation})
				if _, err := a.NewSession().Run(ctx, in); err != nil {
					t.Fatal(err)
				}
			}
			if len(rec.turns) != 2 {
				t.Fatalf("%d requests, want 2", len(rec.turns))
			}
			k0, k1 := rec.turns[0].key, rec.turns[1].key
			if k0 == "" || k1 == "" {
				t.Fatalf("a request has no cache key: %q, %q", k0, k1)
			}
			if tc.same && (k0 != tc.conversation || k1 != tc.conversation) {
				t.Fatalf("cache keys %q and %q, want %q for both", k0, k1, tc.conversation)
			}
			if !tc.same && k0 == k1 {
				t.Fatalf("two sessions share the cache key %q", k0)
			}
		})
	}
}
