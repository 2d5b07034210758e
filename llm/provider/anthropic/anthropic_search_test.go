package anthropic

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

// TestAnthropicToolsDeferral: the tool search tool and defer_loading are
// sent only when a tool is deferred; a deferred tool the conversation calls
// with no search result naming it (compacted away) is defined outright.
func TestAnthropicToolsDeferral(t *testing.T) {
	defs := []llm.ToolDef{{Name: "pinned"}, {Name: "get_weather", Deferred: true}, {Name: "get_time", Deferred: true}}
	found := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "t1", Name: "get_weather"}},
		Provider: json.RawMessage(`[{"type":"server_tool_use","id":"s1","name":"tool_search_tool_bm25","input":{"query":"weather"}},` +
			`{"type":"tool_search_tool_result","tool_use_id":"s1","content":{"type":"tool_search_tool_search_result","tool_references":[{"type":"tool_reference","tool_name":"get_weather"}]}}]`)}
	unfound := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "t1", Name: "get_weather"}}}
	for _, tc := range []struct {
		name         string
		defs         []llm.ToolDef
		msgs         []llm.Message
		wantSearch   bool
		wantDeferred []string
	}{
		{name: "none deferred", defs: []llm.ToolDef{{Name: "a"}, {Name: "b"}}},
		{name: "deferred", defs: defs, wantSearch: true, wantDeferred: []string{"get_weather", "get_time"}},
		{name: "found by a search in the conversation", defs: defs, msgs: []llm.Message{found}, wantSearch: true,
			wantDeferred: []string{"get_weather", "get_time"}},
		{name: "called, its search compacted away", defs: defs, msgs: []llm.Message{unfound}, wantSearch: true,
			wantDeferred: []string{"get_time"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools := anthropicTools(&llm.Request{Tools: tc.defs, Messages: tc.msgs})
			search := len(tools) > 0 && tools[0].Type == toolSearchType
			var deferred []string
			for _, tl := range tools {
				if tl.DeferLoading {
					deferred = append(deferred, tl.Name)
				}
			}
			if search != tc.wantSearch || !slices.Equal(deferred, tc.wantDeferred) {
				t.Fatalf("search tool %v, deferred %v; want %v, %v", search, deferred, tc.wantSearch, tc.wantDeferred)
			}
			b, _ := json.Marshal(tools)
			if strings.Contains(b2s(b), `"defer_loading":false`) || (search && !strings.Contains(b2s(b), `{"type":"`+toolSearchType+`","name":"`+toolSearchName+`"}`)) {
				t.Errorf("wire form: %s", b)
			}
		})
	}
}

func b2s(b []byte) string { return string(b) }

// TestAnthropicServerBlocksRoundTrip: a streamed answer's server tool
// blocks (input assembled from its deltas) and a JSON answer's (content an
// object, once refused as a malformed answer) are kept in Message.Provider
// and sent back verbatim, before the tool_use blocks.
func TestAnthropicServerBlocksRoundTrip(t *testing.T) {
	s := newAnthropicStream(nil, "")
	s.parser.Feed(providertest.Fixture(t, "anthropic_stream_search.sse"))
	s.parser.Close()
	streamed := s.response()

	body := `{"type":"message","role":"assistant","stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1},"content":[` +
		`{"type":"server_tool_use","id":"srvtoolu_01ABC","name":"tool_search_tool_bm25","input":{"query":"weather"}},` +
		`{"type":"tool_search_tool_result","tool_use_id":"srvtoolu_01ABC","content":{"type":"tool_search_tool_search_result","tool_references":[{"type":"tool_reference","tool_name":"get_weather"}]}},` +
		`{"type":"tool_use","id":"toolu_01XYZ","name":"get_weather","input":{"city":"Paris"}}]}`
	a := &anthropicModel{name: "anthropic/test"}
	decoded, err := a.readJSON(t.Context(), strings.NewReader(body), "")
	if err != nil {
		t.Fatal(err)
	}
	for name, resp := range map[string]*llm.Response{"stream": streamed, "json": decoded} {
		m := resp.Message
		if len(m.ToolCalls) != 1 || m.ToolCalls[0].Name != "get_weather" || string(m.ToolCalls[0].Args) != `{"city":"Paris"}` {
			t.Fatalf("%s: calls %+v", name, m.ToolCalls)
		}
		var blocks []map[string]json.RawMessage
		if err := json.Unmarshal(m.Provider, &blocks); err != nil || len(blocks) != 2 {
			t.Fatalf("%s: provider blocks %s (%v)", name, m.Provider, err)
		}
		if string(blocks[0]["input"]) != `{"query":"weather"}` || !strings.Contains(string(blocks[1]["content"]), `"tool_name":"get_weather"`) {
			t.Errorf("%s: blocks %s", name, m.Provider)
		}
		out, _ := json.Marshal(anthropicMessages([]llm.Message{{Role: llm.RoleUser, Text: "weather?"}, m}))
		want := `"content":[` + string(blocks0(t, m.Provider)) + `,`
		if !strings.Contains(string(out), want) || !strings.Contains(string(out), `{"type":"tool_use","id":"toolu_01XYZ"`) {
			t.Errorf("%s: sent back %s", name, out)
		}
	}
}

// blocks0 is the Provider array's elements, comma-joined, as sent.
func blocks0(t *testing.T, raw json.RawMessage) string {
	var raws []json.RawMessage
	if err := json.Unmarshal(raw, &raws); err != nil {
		t.Fatal(err)
	}
	parts := make([]string, len(raws))
	for i, r := range raws {
		parts[i] = string(r)
	}
	return strings.Join(parts, ",")
}

// FuzzAnthropicJSON: any answer body decodes to a Response or an error,
// and whatever provider blocks it keeps are JSON that can be sent back.
func FuzzAnthropicJSON(f *testing.F) {
	f.Add([]byte(providertest.AnthropicFinal))
	f.Add(providertest.Fixture(f, "anthropic_messages_tools.json"))
	f.Add([]byte(`{"content":[{"type":"tool_search_tool_result","tool_use_id":"s","content":{"tool_references":[{"tool_name":"x"}]}},{"type":"server_tool_use","id":"s","input":{}}]}`))
	f.Add([]byte(`{"content":[{"type":"web_search_tool_result","content":[1,2]},{"type":"tool_result","content":"x"}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		a := &anthropicModel{name: "anthropic/fuzz"}
		out, err := a.readJSON(t.Context(), strings.NewReader(string(in)), "")
		if err != nil {
			return
		}
		if p := out.Message.Provider; p != nil && !json.Valid(p) {
			t.Fatalf("provider blocks are not JSON: %q", p)
		}
		if _, err := json.Marshal(anthropicMessages([]llm.Message{out.Message})); err != nil {
			t.Fatalf("the answer cannot be sent back: %v", err)
		}
	})
}
