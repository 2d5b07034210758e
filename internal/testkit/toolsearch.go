package testkit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// AnthropicSearch is a local server that speaks Anthropic's Messages API
// with its tool search tool, as the API documents it: tools marked
// defer_loading are outside the model's view until a search finds them;
// the search comes back as a server_tool_use block and a
// tool_search_tool_result naming the tools found, and a tool_use may call
// only a tool that is defined outright or named by a search result in the
// conversation (else 400, as the API answers). Its "model" searches the
// deferred tools for Query (every word must appear in the name or
// description), calls the first tool found with Args, and then answers
// "done: " and the tool's result. With stream set in the request, it
// answers with server-sent events.
type AnthropicSearch struct {
	URL   string
	Query string
	Args  json.RawMessage
	searchLog
}

// searchLog records what a tool search server saw of each request.
type searchLog struct {
	mu       sync.Mutex
	requests []AnthropicRequest
}

// Requests returns the requests so far.
func (l *searchLog) Requests() []AnthropicRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.requests)
}

func (l *searchLog) record(r AnthropicRequest) {
	l.mu.Lock()
	l.requests = append(l.requests, r)
	l.mu.Unlock()
}

// AnthropicRequest is what the server saw of one request.
type AnthropicRequest struct {
	Beta     string
	Search   bool     // the tool search tool was defined
	Defined  []string // tools defined outright (not deferred)
	Deferred []string
	// Echoed reports whether the last assistant turn sent back carried the
	// server's search blocks verbatim.
	Echoed bool
}

// NewAnthropicSearch starts the server; it stops with the test.
func NewAnthropicSearch(t testing.TB, query string, args json.RawMessage) *AnthropicSearch {
	s := &AnthropicSearch{Query: query, Args: args}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

type antTool struct {
	Type         string `json:"type"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	DeferLoading bool   `json:"defer_loading"`
}

type antBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
}

type antRequest struct {
	Stream   bool      `json:"stream"`
	Tools    []antTool `json:"tools"`
	Messages []struct {
		Role    string     `json:"role"`
		Content []antBlock `json:"content"`
	} `json:"messages"`
}

// searchID is the id of the server's one search.
const searchID = "srvtoolu_01search"

func (s *AnthropicSearch) serve(w http.ResponseWriter, r *http.Request) {
	var req antRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	seen := AnthropicRequest{Beta: r.Header.Get("anthropic-beta")}
	tools := map[string]antTool{}
	for _, t := range req.Tools {
		switch {
		case t.Type == "tool_search_tool_bm25_20251119":
			seen.Search = true
		case t.DeferLoading:
			seen.Deferred = append(seen.Deferred, t.Name)
		default:
			seen.Defined = append(seen.Defined, t.Name)
		}
		tools[t.Name] = t
	}
	// Every tool_use of the conversation must name a tool in view.
	referenced := map[string]bool{}
	var result string
	for _, m := range req.Messages {
		for _, b := range m.Content {
			switch b.Type {
			case "tool_search_tool_result":
				var c struct {
					Refs []struct {
						Name string `json:"tool_name"`
					} `json:"tool_references"`
				}
				_ = json.Unmarshal(b.Content, &c)
				for _, ref := range c.Refs {
					referenced[ref.Name] = true
				}
				seen.Echoed = b.ToolUseID == searchID
			case "tool_use":
				if t, ok := tools[b.Name]; !ok || (t.DeferLoading && !referenced[b.Name]) {
					s.record(seen)
					http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"tool_use of a tool not loaded: `+b.Name+`"}}`, http.StatusBadRequest)
					return
				}
			case "tool_result":
				_ = json.Unmarshal(b.Content, &result)
			}
		}
	}
	s.record(seen)
	var blocks []antBlock
	stop := "end_turn"
	if result != "" {
		blocks = []antBlock{{Type: "text", Text: "done: " + result}}
	} else {
		found := s.search(req.Tools)
		refs := make([]map[string]string, 0, len(found))
		for _, n := range found {
			refs = append(refs, map[string]string{"type": "tool_reference", "tool_name": n})
		}
		content, _ := json.Marshal(map[string]any{"type": "tool_search_tool_search_result", "tool_references": refs})
		input, _ := json.Marshal(map[string]string{"query": s.Query})
		blocks = []antBlock{{Type: "text", Text: "Searching."},
			{Type: "server_tool_use", ID: searchID, Name: "tool_search_tool_bm25", Input: input},
			{Type: "tool_search_tool_result", ToolUseID: searchID, Content: content}}
		if len(found) > 0 {
			blocks = append(blocks, antBlock{Type: "tool_use", ID: "toolu_01call", Name: found[0], Input: s.Args})
			stop = "tool_use"
		}
	}
	if req.Stream {
		writeAnthropicStream(w, blocks, stop)
		return
	}
	w.Header().Set("content-type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "message", "role": "assistant", "content": blocks,
		"stop_reason": stop, "usage": map[string]int{"input_tokens": 100, "output_tokens": 10}})
}

// search returns the deferred tools whose name or description holds every
// word of the query.
func (s *AnthropicSearch) search(tools []antTool) []string {
	var out []string
	for _, t := range tools {
		if !t.DeferLoading {
			continue
		}
		text := strings.ToLower(t.Name + " " + t.Description)
		all := true
		for _, w := range strings.Fields(strings.ToLower(s.Query)) {
			all = all && strings.Contains(text, w)
		}
		if all {
			out = append(out, t.Name)
		}
	}
	return out
}

// writeAnthropicStream answers with the blocks as server-sent events: a
// tool_use or server_tool_use block's input in input_json_delta events.
func writeAnthropicStream(w http.ResponseWriter, blocks []antBlock, stop string) {
	w.Header().Set("content-type", "text/event-stream")
	ev := func(name string, v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{"usage": map[string]int{"input_tokens": 100}}})
	for i, b := range blocks {
		start := b
		var input json.RawMessage
		if b.Type == "tool_use" || b.Type == "server_tool_use" {
			start.Input, input = json.RawMessage(`{}`), b.Input
		}
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})
		if len(input) > 0 {
			half := len(input) / 2
			for _, part := range []json.RawMessage{input[:half], input[half:]} {
				ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]string{"type": "input_json_delta", "partial_json": string(part)}})
			}
		}
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]string{"stop_reason": stop},
		"usage": map[string]int{"output_tokens": 10}})
	ev("message_stop", map[string]any{"type": "message_stop"})
}

// OpenAISearch is a local server that speaks OpenAI's Responses API
// (POST /v1/responses) with its hosted tool_search, as the API documents
// it: function tools marked defer_loading are loaded only by a
// tool_search_output item of the conversation, and a function_call of a
// tool not loaded is refused (400). Its "model" behaves as
// AnthropicSearch's does. With stream set, it answers with server-sent
// events (text deltas, then response.completed with the whole response).
type OpenAISearch struct {
	URL   string // the base URL, up to and including /v1
	Query string
	Args  json.RawMessage
	// The requests it saw (Beta is unused; Echoed reports that the tool
	// search's items came back).
	searchLog
}

// NewOpenAISearch starts the server; it stops with the test.
func NewOpenAISearch(t testing.TB, query string, args json.RawMessage) *OpenAISearch {
	s := &OpenAISearch{Query: query, Args: args}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/v1"
	return s
}

type oaiItem struct {
	Type      string            `json:"type"`
	Role      string            `json:"role,omitempty"`
	ID        string            `json:"id,omitempty"`
	CallID    string            `json:"call_id,omitempty"`
	Name      string            `json:"name,omitempty"`
	Arguments json.RawMessage   `json:"arguments,omitempty"`
	Output    string            `json:"output,omitempty"`
	Execution string            `json:"execution,omitempty"`
	Status    string            `json:"status,omitempty"`
	Tools     []json.RawMessage `json:"tools,omitempty"`
	Content   json.RawMessage   `json:"content,omitempty"`
}

func (s *OpenAISearch) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Stream bool              `json:"stream"`
		Store  *bool             `json:"store"`
		Tools  []json.RawMessage `json:"tools"`
		Input  []oaiItem         `json:"input"`
	}
	if r.URL.Path != "/v1/responses" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	var seen AnthropicRequest
	tools := map[string]antTool{}
	var fns []antTool
	for _, raw := range req.Tools {
		var t antTool
		_ = json.Unmarshal(raw, &t)
		switch {
		case t.Type == "tool_search":
			seen.Search = true
		case t.DeferLoading:
			seen.Deferred = append(seen.Deferred, t.Name)
		default:
			seen.Defined = append(seen.Defined, t.Name)
		}
		tools[t.Name] = t
		fns = append(fns, t)
	}
	loaded := map[string]bool{}
	var result string
	for _, it := range req.Input {
		switch it.Type {
		case "tool_search_output":
			seen.Echoed = it.ID == "tso_1"
			for _, raw := range it.Tools {
				var t antTool
				_ = json.Unmarshal(raw, &t)
				loaded[t.Name] = true
			}
		case "function_call":
			if t, ok := tools[it.Name]; !ok || (t.DeferLoading && !loaded[it.Name]) {
				s.record(seen)
				http.Error(w, `{"error":{"message":"function_call of a tool not loaded: `+it.Name+`","type":"invalid_request_error"}}`, http.StatusBadRequest)
				return
			}
		case "function_call_output":
			result = it.Output
		}
	}
	s.record(seen)
	var output []oaiItem
	var text string
	if result != "" {
		text = "done: " + result
		content, _ := json.Marshal([]map[string]string{{"type": "output_text", "text": text}})
		output = []oaiItem{{Type: "message", Role: "assistant", ID: "msg_1", Content: content}}
	} else {
		found := (&AnthropicSearch{Query: s.Query}).search(fns)
		var defs []json.RawMessage
		for _, n := range found {
			d, _ := json.Marshal(map[string]any{"type": "function", "name": n, "description": tools[n].Description,
				"parameters": map[string]any{"type": "object"}})
			defs = append(defs, d)
		}
		q, _ := json.Marshal(map[string]string{"query": s.Query})
		output = []oaiItem{{Type: "tool_search_call", ID: "ts_1", Execution: "server", Status: "completed", Arguments: q},
			{Type: "tool_search_output", ID: "tso_1", Execution: "server", Status: "completed", Tools: defs}}
		if len(found) > 0 {
			args, _ := json.Marshal(string(s.Args))
			output = append(output, oaiItem{Type: "function_call", ID: "fc_1", CallID: "call_1", Name: found[0], Arguments: args})
		}
	}
	resp := map[string]any{"object": "response", "status": "completed", "output": output,
		"usage": map[string]int{"input_tokens": 100, "output_tokens": 10}}
	if !req.Stream {
		w.Header().Set("content-type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	w.Header().Set("content-type", "text/event-stream")
	ev := func(v map[string]any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b)
	}
	ev(map[string]any{"type": "response.created", "response": map[string]any{"status": "in_progress"}})
	for i := 0; i < len(text); i += 7 {
		ev(map[string]any{"type": "response.output_text.delta", "delta": text[i:min(i+7, len(text))]})
	}
	ev(map[string]any{"type": "response.completed", "response": resp})
}
