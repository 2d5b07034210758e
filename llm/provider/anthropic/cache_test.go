package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

// TestCacheBreakpoints: where the breakpoints go, how many, and none with
// NoCache.
func TestCacheBreakpoints(t *testing.T) {
	tools := []llm.ToolDef{{Name: "a"}, {Name: "b"}}
	deferredLast := []llm.ToolDef{{Name: "a"}, {Name: "b"}, {Name: "c", Deferred: true}}
	allDeferred := []llm.ToolDef{{Name: "a", Deferred: true}}
	thinking := json.RawMessage(`[{"type":"thinking","thinking":"hmm","signature":"sig"}]`)
	server := json.RawMessage(`[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"server_tool_use","id":"s1","name":"tool_search_tool_bm25","input":{}}]`)
	conv := []llm.Message{
		{Role: llm.RoleUser, Text: "q"},
		{Role: llm.RoleAssistant, Text: "t", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "a", Args: []byte(`{}`)}}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "c1", Content: "r1"}}},
	}
	tests := []struct {
		name string
		req  llm.Request
		want []string
	}{
		{"tools, system, previous turn, newest message", llm.Request{System: "s", Tools: tools, Messages: conv},
			[]string{"tools.1", "system.0", "messages.1.content.1", "messages.2.content.0"}},
		{"NoCache places none", llm.Request{System: "s", Tools: tools, Messages: conv, NoCache: true}, nil},
		{"first turn: no previous turn", llm.Request{System: "s", Tools: tools, Messages: conv[:1]},
			[]string{"tools.1", "system.0", "messages.0.content.0"}},
		{"no system, no tools", llm.Request{Messages: conv}, []string{"messages.1.content.1", "messages.2.content.0"}},
		{"a deferred tool last: the last loaded one is marked", llm.Request{Tools: deferredLast, Messages: conv[:1]},
			[]string{"tools.2", "messages.0.content.0"}}, // tools.0 is the tool search tool
		{"every tool deferred: no tool mark (the search tool is the API's)", llm.Request{Tools: allDeferred, Messages: conv[:1]},
			[]string{"messages.0.content.0"}},
		{"a message of thinking only is not marked", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "q"},
			{Role: llm.RoleAssistant, Provider: thinking}, {Role: llm.RoleUser, Text: "go on"}}},
			[]string{"messages.2.content.0"}},
		{"merged user messages: the last block", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "q"},
			{Role: llm.RoleUser, Text: "more"}}},
			[]string{"messages.0.content.1"}},
		{"server tool blocks last in a turn: the block before them", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "q"},
			{Role: llm.RoleAssistant, Text: "found it", Provider: server}, {Role: llm.RoleUser, Text: "go on"}}},
			[]string{"messages.1.content.1", "messages.2.content.0"}},
		{"an empty user text is not marked", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "q"},
			{Role: llm.RoleAssistant, Text: "a"}, {Role: llm.RoleUser, Parts: []llm.Part{llm.TextPart("")}}}},
			[]string{"messages.1.content.0"}},
		{"a forced answer tool is not marked", llm.Request{Tools: tools, Messages: conv[:1], Output: &llm.Output{Schema: json.RawMessage(`{"type":"object"}`)}},
			[]string{"tools.1", "messages.0.content.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &anthropicModel{model: "claude-3-5-haiku-latest", family: generationOf("claude-3-5-haiku-latest"), maxTokens: defaultMaxTokens}
			body, err := json.Marshal(a.toAnthropic(&tt.req))
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatal(err)
			}
			got := marks(v, "")
			if !slices.Equal(got, tt.want) {
				t.Errorf("breakpoints at %q, want %q\n%s", got, tt.want, body)
			}
			if len(got) > maxBreakpoints {
				t.Errorf("%d breakpoints, over the API's %d", len(got), maxBreakpoints)
			}
		})
	}
}

// marks lists the paths of the values that carry cache_control, in order.
func marks(v any, path string) []string {
	var out []string
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["cache_control"]; ok {
			out = append(out, path)
		}
		for _, k := range []string{"tools", "system", "messages", "content"} {
			if c, ok := v[k]; ok {
				out = append(out, marks(c, join(k))...)
			}
		}
	case []any:
		for i, e := range v {
			out = append(out, marks(e, join(fmt.Sprint(i)))...)
		}
	}
	return out
}

// cacheMarker is a breakpoint's bytes in a request, as the provider
// marshals it (after the block's other fields).
const cacheMarker = `,"cache_control":{"type":"ephemeral"}`

// promptPrefix is a request's prompt as the API caches it: the exact bytes
// of its tools, system and messages, in that order, with the breakpoints'
// marks taken out (they are not part of the prompt), and the offsets in it
// where the breakpoints were.
func promptPrefix(t testing.TB, raw []byte) (prompt []byte, breakpoints []int) {
	t.Helper()
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("request is not JSON: %v", err)
	}
	var all []byte
	for _, k := range []string{"tools", "system", "messages"} {
		all = append(all, `"`+k+`":`...)
		all = append(all, body[k]...)
		all = append(all, ',')
	}
	for {
		i := bytes.Index(all, []byte(cacheMarker))
		if i < 0 {
			return all, breakpoints
		}
		breakpoints = append(breakpoints, i)
		all = append(all[:i], all[i+len(cacheMarker):]...)
	}
}

// tokens estimates a text's tokens as its bytes / 4, the usual rule of
// thumb for English and JSON; what the figures here report is a share, which the
// estimate's scale does not change.
func tokens(n int) int { return n / 4 }

// cacheServer is a local Messages API that answers a scripted run and
// reports usage as the API does with a prompt cache: a request's prompt
// read from the cache up to the longest prefix an earlier request cached
// at one of its breakpoints, written to it from there to its own last
// breakpoint, and the rest plain input. (It does not model the API's
// minimum cacheable length nor its 20-block lookback, which the placement
// of cache.go keeps well inside: a turn's breakpoint is 2 blocks after the
// one the previous turn cached.)
type cacheServer struct {
	*httptest.Server
	t       testing.TB
	mu      sync.Mutex
	cached  []string
	raws    [][]byte
	answers func(turn int) string
}

func newCacheServer(t testing.TB, answers func(turn int) string) *cacheServer {
	s := &cacheServer{t: t, answers: answers}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *cacheServer) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	prompt, bps := promptPrefix(s.t, raw)
	s.mu.Lock()
	turn := len(s.raws)
	s.raws = append(s.raws, raw)
	read := 0
	for _, c := range s.cached {
		if len(c) > read && bytes.HasPrefix(prompt, []byte(c)) {
			read = len(c)
		}
	}
	last := 0
	if len(bps) > 0 {
		last = bps[len(bps)-1]
	}
	for _, bp := range bps {
		s.cached = append(s.cached, string(prompt[:bp]))
	}
	s.mu.Unlock()
	write := max(last-read, 0)
	plain := len(prompt) - read - write
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"msg_%d","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":%s,"stop_reason":"tool_use",`+
		`"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":20}}`,
		turn, s.answers(turn), tokens(plain), tokens(write), tokens(read))
}

func (s *cacheServer) requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.raws)
}

// fiftyTools are an agent's 50 tools, each with a description and schema
// of the size MCP servers give theirs.
func fiftyTools() []llm.ToolDef {
	defs := make([]llm.ToolDef, 50)
	for i := range defs {
		defs[i] = llm.ToolDef{Name: fmt.Sprintf("tool_%02d", i),
			Description: fmt.Sprintf("Tool %d of the catalog: looks up records of kind %d by id or by query, and returns them as JSON.", i, i),
			Schema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"id":{"type":"string","description":"the record's id"},`+
				`"query":{"type":"string","description":"a search over records of kind %d"},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["query"]}`, i))}
	}
	return defs
}

// toolTurn is the scripted answer of a turn: a sentence and a call.
func toolTurn(turn int) string {
	return fmt.Sprintf(`[{"type":"text","text":"Looking that up (step %d)."},{"type":"tool_use","id":"toolu_%02d","name":"tool_%02d","input":{"query":"records of step %d"}}]`,
		turn, turn, turn%50, turn)
}

// agentRun drives m for turns turns as an agent would: each answer and
// its tool's result are appended to the conversation, and the next turn
// sends all of it with the same system prompt and tools. It returns each
// turn's usage.
func agentRun(t testing.TB, m llm.Model, turns int, noCache bool) []llm.Usage {
	t.Helper()
	req := &llm.Request{System: "You are an operations assistant. Use the tools to answer; cite record ids.", Tools: fiftyTools(), NoCache: noCache,
		Messages: []llm.Message{{Role: llm.RoleUser, Text: "Audit the records of every kind and summarise what changed this week."}}}
	var usage []llm.Usage
	for turn := range turns {
		resp, err := m.Generate(t.Context(), req)
		if err != nil {
			t.Fatalf("turn %d: %v", turn+1, err)
		}
		usage = append(usage, resp.Usage)
		var results []llm.ToolResult
		for _, c := range resp.Message.ToolCalls {
			results = append(results, llm.ToolResult{CallID: c.ID, Name: c.Name,
				Content: fmt.Sprintf(`{"records":[{"id":"r-%d-1","changed":true,"note":"owner changed"},{"id":"r-%d-2","changed":false}]}`, turn, turn)})
		}
		req.Messages = append(req.Messages, resp.Message, llm.Message{Role: llm.RoleTool, ToolResults: results})
	}
	return usage
}

func newCacheModel(t testing.TB, s *cacheServer) llm.Model {
	m, err := newAnthropic(provider.Config{APIKey: providertest.AnthropicKey, BaseURL: s.URL, Model: "claude-sonnet-4-5", HTTPClient: s.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCachePrefixStable is the 20-turn run with 50 tools: turn N+1's
// prompt (tools, system, messages, as sent) is byte-identical to turn N's
// up to turn N's last breakpoint, so the cache turn N wrote is read; and
// every turn after the first reads most of its input from the cache.
func TestCachePrefixStable(t *testing.T) {
	s := newCacheServer(t, toolTurn)
	usage := agentRun(t, newCacheModel(t, s), 20, false)
	raws := s.requests()
	if len(raws) != 20 {
		t.Fatalf("%d requests", len(raws))
	}
	requirePrefixStable(t, raws)
	requireCacheReads(t, usage)

	// With NoCache nothing is marked, so nothing is read.
	off := newCacheServer(t, toolTurn)
	for i, u := range agentRun(t, newCacheModel(t, off), 3, true) {
		if u.CacheReadTokens != 0 || u.CacheWriteTokens != 0 {
			t.Errorf("NoCache turn %d: %+v", i+1, u)
		}
	}
	for _, raw := range off.requests() {
		if bytes.Contains(raw, []byte("cache_control")) {
			t.Fatalf("NoCache request has a breakpoint: %s", raw)
		}
	}
}

// BenchmarkCacheShare runs the 20-turn, 50-tool conversation with the
// provider's breakpoints and, as the baseline in the same run, with
// NoCache, against the local server that reports usage as the API does;
// it reports the share of input tokens read from the cache on turns 2 to
// 20 (cache-read-share, the goal being >= 0.8), the share that was
// in the cacheable prefix (up to the request's last breakpoint), and the
// input's cost relative to the uncached run at the API's rates (a cache
// read 0.1 of an input token, a 5-minute cache write 1.25). The timings
// CompareBench reports include the local server's own cache bookkeeping,
// which only the cached run does: they are not the provider's overhead.
func BenchmarkCacheShare(b *testing.B) {
	cached := newCacheServer(b, toolTurn)
	plain := newCacheServer(b, toolTurn)
	mc, mp := newCacheModel(b, cached), newCacheModel(b, plain)
	var withCache, without []llm.Usage
	providertest.CompareBench(b, "nocache", func() { without = agentRun(b, mp, 20, true) },
		"cache", func() { withCache = agentRun(b, mc, 20, false) })
	var input, read, write, prefix, plainInput int
	for i, u := range withCache {
		if i == 0 {
			continue
		}
		input += u.InputTokens
		read += u.CacheReadTokens
		write += u.CacheWriteTokens
		prefix += u.CacheReadTokens + u.CacheWriteTokens
	}
	for i, u := range without {
		if i > 0 {
			plainInput += u.InputTokens
		}
	}
	if input == 0 || plainInput == 0 {
		b.Fatal("no input counted")
	}
	b.ReportMetric(float64(read)/float64(input), "cache-read-share")
	b.ReportMetric(float64(prefix)/float64(input), "cacheable-share")
	b.ReportMetric((0.1*float64(read)+1.25*float64(write)+float64(input-read-write))/float64(plainInput), "input-cost/nocache")
}

// requirePrefixStable checks a run's requests as the API caches them:
// turn N+1's prompt (tools, system, messages, as sent) is byte-identical
// to turn N's up to turn N's last breakpoint, each turn has the
// breakpoints the placement promises, and each falls at a block's end.
func requirePrefixStable(t *testing.T, raws [][]byte) {
	t.Helper()
	for n := 0; n+1 < len(raws); n++ {
		prev, bps := promptPrefix(t, raws[n])
		next, nextBps := promptPrefix(t, raws[n+1])
		if want := min(n+3, 4); len(bps) != want || len(nextBps) != 4 {
			t.Fatalf("turn %d has %d breakpoints (want %d), turn %d %d (want 4)", n+1, len(bps), want, n+2, len(nextBps))
		}
		last := bps[len(bps)-1]
		if !bytes.Equal(prev[:last], next[:min(last, len(next))]) {
			i := 0
			for i < last && prev[i] == next[i] {
				i++
			}
			t.Fatalf("turn %d's prompt differs from turn %d's at byte %d of its cached %d:\n%q\n%q", n+2, n+1, i, last,
				prev[max(0, i-40):min(last, i+40)], next[max(0, i-40):min(len(next), i+40)])
		}
		// Each of turn N's breakpoints falls on a block turn N+1 sends too.
		for _, bp := range bps {
			if !slices.ContainsFunc([]byte(",]}"), func(c byte) bool { return prev[bp] == c }) {
				t.Errorf("turn %d: breakpoint at %d is not at a block's end: %q", n+1, bp, prev[max(0, bp-20):bp+1])
			}
		}
	}
}

// requireCacheReads checks a run's usage: turn 1 writes the cache and
// reads none, and every later turn reads at least 80% of its input from
// it.
func requireCacheReads(t *testing.T, usage []llm.Usage) {
	t.Helper()
	for i, u := range usage {
		if u.InputTokens == 0 || u.CacheReadTokens+u.CacheWriteTokens > u.InputTokens {
			t.Fatalf("turn %d usage %+v", i+1, u)
		}
		if i == 0 {
			if u.CacheReadTokens != 0 || u.CacheWriteTokens == 0 {
				t.Errorf("turn 1 should write the cache and read none: %+v", u)
			}
			continue
		}
		if share := float64(u.CacheReadTokens) / float64(u.InputTokens); share < 0.8 {
			t.Errorf("turn %d read %.0f%% of its input from the cache, want >= 80%%: %+v", i+1, 100*share, u)
		}
	}
}
