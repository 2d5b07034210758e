package agent_test

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/anthropic"
	"github.com/switchboard-dev/switchboard/llm/provider/openai"
)

// TestProviderToolSearch: with ContextConfig.ProviderSearch and a model
// whose provider searches tools itself (Anthropic's tool search, served by
// a local server that speaks its wire format and refuses a call to a tool
// not loaded), the 400 tools are sent deferred but the pinned one, the
// agent defines no search tool of its own, the provider's search blocks go
// back verbatim with the conversation, and the tool it found runs. The
// prompt breakdown counts only the tools in the model's view.
func TestProviderToolSearch(t *testing.T) {
	type server interface {
		Requests() []testkit.AnthropicRequest
	}
	for _, tc := range []struct {
		provider string
		stream   bool
	}{{"anthropic", false}, {"anthropic", true}, {"openai", false}, {"openai", true}} {
		stream := tc.stream
		name := tc.provider + map[bool]string{false: " json", true: " stream"}[stream]
		t.Run(name, func(t *testing.T) {
			calls := &sync.Map{}
			args := json.RawMessage(`{"a":1,"b":2}`)
			var srv server
			var url string
			if tc.provider == "anthropic" {
				s := testkit.NewAnthropicSearch(t, "sum two numbers", args)
				srv, url = s, s.URL
			} else {
				s := testkit.NewOpenAISearch(t, "sum two numbers", args)
				srv, url = s, s.URL
			}
			newModel := openai.New
			if tc.provider == "anthropic" {
				newModel = anthropic.New
			}
			model, err := newModel(provider.Config{APIKey: "test-key", BaseURL: url})
			if err != nil {
				t.Fatal(err)
			}
			a := newAgent(t, agent.Config{Model: model, Toolsets: serverTools(t, 20, 20, calls),
				Context: agent.ContextConfig{Window: 200_000, ProviderSearch: true, Pinned: []string{"mcp__srv00__*"}}})
			ctx := testkit.Ctx(t, 20*time.Second)
			var evs []agent.Event
			var final string
			if stream {
				evs, err = collect(t, a.Stream(ctx, "add 1 and 2"))
				if err == nil {
					final = evs[len(evs)-1].Text
				}
			} else {
				var ans *agent.Answer
				ans, err = a.Run(ctx, "add 1 and 2")
				if err == nil {
					final = ans.Text
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2 (search and call, then the answer)", len(reqs))
			}
			first := reqs[0]
			pinned := srvTools(t, 0)
			if !first.Search || !slices.Equal(first.Defined, pinned) || len(first.Deferred) != 380 {
				t.Fatalf("first request: search tool %v, defined %v, %d deferred; want the search tool, srv00's 20 pinned tools, 380 deferred",
					first.Search, first.Defined, len(first.Deferred))
			}
			if slices.Contains(first.Defined, "search_tools") || slices.Contains(first.Deferred, "search_tools") {
				t.Error("the agent's own search tool was sent next to the provider's")
			}
			if tc.provider == "anthropic" && !strings.Contains(first.Beta, "advanced-tool-use") {
				t.Errorf("anthropic-beta = %q", first.Beta)
			}
			if !reqs[1].Echoed {
				t.Error("the provider's search blocks did not go back with the conversation")
			}
			called := 0
			calls.Range(func(k, v any) bool { called++; return true })
			if called != 1 || !strings.HasPrefix(final, "done: ") || !strings.Contains(final, "ran mcp__srv02__get-sum") || !strings.Contains(final, `{"a":1,"b":2}`) {
				t.Errorf("final %q after %d distinct tools ran, want one found tool's result", final, called)
			}
			if stream {
				info := turnInfos(evs)[0]
				if info.ToolsDefined != 20 || info.ToolsDeferred != 380 {
					t.Errorf("breakdown: %d defined, %d deferred; want 20 and 380", info.ToolsDefined, info.ToolsDeferred)
				}
				all := toolTokensAllDefined(t)
				if float64(info.Tools) > 0.10*float64(all) {
					t.Errorf("tool tokens %d with provider search, %d with every tool defined: want at most 10%%", info.Tools, all)
				}
			}
		})
	}
}

// srvTools are the names of server i's tools, in listing order.
func srvTools(t *testing.T, i int) []string {
	var out []string
	tools, _ := serverTools(t, i+1, 20, nil)[i].Tools(t.Context())
	for _, tl := range tools {
		out = append(out, tl.Spec().Name)
	}
	return out
}

// toolTokensAllDefined is the first turn's tool tokens with every one of
// the 400 tools defined.
func toolTokensAllDefined(t *testing.T) int {
	a := newAgent(t, agent.Config{Model: llm.NewScripted(llm.Say("ok")), Toolsets: serverTools(t, 20, 20, nil),
		Context: agent.ContextConfig{Window: 200_000, DeferShare: -1}})
	evs, err := collect(t, a.Stream(testkit.Ctx(t, 10*time.Second), "hi"))
	if err != nil {
		t.Fatal(err)
	}
	return turnInfos(evs)[0].Tools
}

// TestProviderSearchIgnoredElsewhere: a model without a tool search of its
// provider's gets the agent's search tool, whatever ProviderSearch says.
func TestProviderSearchIgnoredElsewhere(t *testing.T) {
	rec := &recorder{inner: llm.NewScripted(llm.Say("done"))}
	a := newAgent(t, agent.Config{Model: rec, Toolsets: serverTools(t, 20, 20, nil),
		Context: agent.ContextConfig{Window: 200_000, ProviderSearch: true}})
	if _, err := a.Run(testkit.Ctx(t, 10*time.Second), "hi"); err != nil {
		t.Fatal(err)
	}
	if got := rec.turns()[0].tools; len(got) != 1 || got[0] != "search_tools" {
		t.Fatalf("tools defined: %v, want the agent's search tool alone", got)
	}
}
