package openai

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

func newTestOpenAI(t *testing.T, p *providertest.Server) llm.Model {
	t.Helper()
	m, err := newOpenAI(provider.Config{APIKey: providertest.OpenAIKey, BaseURL: p.URL + "/v1", Model: "gpt-4o-mini", HTTPClient: p.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestOpenAIToolCallsRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		first  providertest.Reply
	}{
		{"json", false, providertest.Reply{Status: 200, ContentType: "application/json", Body: providertest.Fixture(t, "openai_chat_tools.json")}},
		{"sse", true, providertest.Reply{Status: 200, ContentType: "text/event-stream", Body: providertest.Fixture(t, "openai_stream_tools.sse")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.NewServer(t, tt.first, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.OpenAIFinal)})
			m := newTestOpenAI(t, p)
			var deltas []string
			req := &llm.Request{System: "You are terse.", Tools: providertest.WeatherTools(),
				Messages: []llm.Message{{Role: llm.RoleUser, Text: "Weather in Paris and Oslo?"}}}
			if tt.stream {
				req.OnText = func(d string) { deltas = append(deltas, d) }
			}
			resp, err := m.Generate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			wantText := "Let me check both cities."
			if tt.stream {
				wantText = "Checking both."
				if got := strings.Join(deltas, ""); got != wantText || len(deltas) != 2 {
					t.Errorf("OnText got %q, want %q in 2 deltas (text only, no tool-call JSON)", deltas, wantText)
				}
			}
			if resp.Message.Text != wantText {
				t.Errorf("text = %q, want %q", resp.Message.Text, wantText)
			}
			calls := resp.Message.ToolCalls
			if len(calls) != 2 || calls[0].ID != "call_paris" || calls[1].ID != "call_oslo" ||
				calls[0].Name != "get_weather" || calls[1].Name != "get_weather" {
				t.Fatalf("tool calls = %+v", calls)
			}
			providertest.JSONEqual(t, "args[0]", calls[0].Args, `{"city":"Paris"}`)
			if tt.stream {
				providertest.JSONEqual(t, "args[1]", calls[1].Args, `{"city":"Oslo"}`)
			} else {
				providertest.JSONEqual(t, "args[1]", calls[1].Args, `{"city":"Oslo","unit":"celsius"}`)
			}
			if resp.Usage != (llm.Usage{InputTokens: 82, OutputTokens: 41}) {
				t.Errorf("usage = %+v", resp.Usage)
			}
			if resp.StopReason != "tool_calls" {
				t.Errorf("stop reason = %q", resp.StopReason)
			}

			// Second turn: the assistant message and both results go back.
			req2 := &llm.Request{System: req.System, Tools: req.Tools, Messages: []llm.Message{
				req.Messages[0], resp.Message,
				{Role: llm.RoleTool, ToolResults: []llm.ToolResult{
					{CallID: "call_paris", Name: "get_weather", Content: "18°C"},
					{CallID: "call_oslo", Name: "get_weather", Content: "Error: station offline", IsError: true}}},
			}}
			final, err := m.Generate(t.Context(), req2)
			if err != nil {
				t.Fatal(err)
			}
			if final.Message.Text != "Paris is 18°C; Oslo is unknown." || len(final.Message.ToolCalls) != 0 {
				t.Errorf("final = %+v", final.Message)
			}

			reqs := p.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			first, second := reqs[0], reqs[1]
			for _, r := range reqs {
				if r.Path != "/v1/chat/completions" {
					t.Errorf("path = %q", r.Path)
				}
				if got := r.Header.Get("Authorization"); got != "Bearer "+providertest.OpenAIKey {
					t.Errorf("Authorization = %q", got)
				}
				if _, ok := r.Body["tool_choice"]; ok {
					t.Errorf("tool_choice sent: %s", r.Raw)
				}
				if providertest.Path(r.Body, "model") != "gpt-4o-mini" {
					t.Errorf("model = %v", providertest.Path(r.Body, "model"))
				}
				if providertest.Path(r.Body, "tools", 0, "type") != "function" || providertest.Path(r.Body, "tools", 0, "function", "name") != "get_weather" ||
					providertest.Path(r.Body, "tools", 0, "function", "parameters", "required", 0) != "city" {
					t.Errorf("tools = %v", providertest.Path(r.Body, "tools"))
				}
				if providertest.Path(r.Body, "messages", 0, "role") != "system" || providertest.Path(r.Body, "messages", 0, "content") != "You are terse." {
					t.Errorf("system message = %v", providertest.Path(r.Body, "messages", 0))
				}
			}
			if tt.stream {
				if providertest.Path(first.Body, "stream") != true || providertest.Path(first.Body, "stream_options", "include_usage") != true {
					t.Errorf("stream options not sent: %s", first.Raw)
				}
			} else if providertest.Path(first.Body, "stream") != nil {
				t.Errorf("stream sent on a non-streaming call: %s", first.Raw)
			}
			msgs, _ := providertest.Path(second.Body, "messages").([]any)
			if len(msgs) != 5 {
				t.Fatalf("second request has %d messages, want 5: %s", len(msgs), second.Raw)
			}
			asst := msgs[2]
			if providertest.Path(asst, "role") != "assistant" || providertest.Path(asst, "content") != wantText ||
				providertest.Path(asst, "tool_calls", 0, "id") != "call_paris" || providertest.Path(asst, "tool_calls", 1, "id") != "call_oslo" ||
				providertest.Path(asst, "tool_calls", 1, "function", "name") != "get_weather" {
				t.Errorf("assistant message = %v", asst)
			}
			if a, _ := providertest.Path(asst, "tool_calls", 0, "function", "arguments").(string); !strings.Contains(a, "Paris") {
				t.Errorf("arguments of the first call = %q", a)
			}
			for i, id := range []string{"call_paris", "call_oslo"} {
				if providertest.Path(msgs[3+i], "role") != "tool" || providertest.Path(msgs[3+i], "tool_call_id") != id {
					t.Errorf("tool message %d = %v", i, msgs[3+i])
				}
			}
		})
	}
}

func TestOpenAIErrors(t *testing.T) {
	echoKey := `{"error":{"message":"Incorrect API key provided: ` + providertest.OpenAIKey + `. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
	tests := []struct {
		name      string
		stream    bool
		rep       providertest.Reply
		kind      failure.Kind
		retryable bool
	}{
		{"429", false, providertest.Reply{Status: 429, ContentType: "application/json", Body: []byte(`{"error":{"message":"Rate limit reached for gpt-4o-mini on requests per min (RPM): Limit 3, Used 3.","type":"requests","code":"rate_limit_exceeded"}}`)}, failure.Transient, true},
		{"429 streaming", true, providertest.Reply{Status: 429, ContentType: "application/json", Body: []byte(`{"error":{"message":"Rate limit reached","type":"requests"}}`)}, failure.Transient, true},
		{"401 echoing the key", false, providertest.Reply{Status: 401, ContentType: "application/json", Body: []byte(echoKey)}, failure.PermissionDenied, false},
		{"401 streaming", true, providertest.Reply{Status: 401, ContentType: "application/json", Body: []byte(echoKey)}, failure.PermissionDenied, false},
		{"403", false, providertest.Reply{Status: 403, ContentType: "application/json", Body: []byte(`{"error":{"message":"Project does not have access to model","type":"invalid_request_error"}}`)}, failure.PermissionDenied, false},
		{"400", false, providertest.Reply{Status: 400, ContentType: "application/json", Body: []byte(`{"error":{"message":"Invalid schema for function 'get_weather'","type":"invalid_request_error","param":"tools[0].function.parameters","code":"invalid_function_parameters"}}`)}, failure.Model, false},
		{"500 not JSON", false, providertest.Reply{Status: 500, ContentType: "text/html", Body: []byte(`<html>upstream error</html>`)}, failure.Transient, true},
		{"503 streaming", true, providertest.Reply{Status: 503, ContentType: "application/json", Body: []byte(`{"error":{"message":"The engine is currently overloaded","type":"server_error"}}`)}, failure.Transient, true},
		{"stream cut short", true, providertest.Reply{Status: 200, ContentType: "text/event-stream", Body: []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n")}, failure.Transient, true},
		{"error inside the stream", true, providertest.Reply{Status: 200, ContentType: "text/event-stream", Body: []byte("data: {\"error\":{\"message\":\"The server had an error processing your request.\",\"type\":\"server_error\"}}\n\n")}, failure.Transient, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.NewServer(t, tt.rep)
			m := newTestOpenAI(t, p)
			req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}
			if tt.stream {
				req.OnText = func(string) {}
			}
			_, err := m.Generate(t.Context(), req)
			providertest.CheckFailure(t, err, tt.kind, tt.retryable, "openai/gpt-4o-mini", providertest.OpenAIKey)
		})
	}
}

func TestOpenAITransportErrors(t *testing.T) {
	tests := []struct {
		name string
		ctx  func(t *testing.T) context.Context
		down bool
		kind failure.Kind
	}{
		{"server down", func(t *testing.T) context.Context { return t.Context() }, true, failure.Transient},
		{"deadline", func(t *testing.T) context.Context {
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			t.Cleanup(cancel)
			return ctx
		}, false, failure.Timeout},
		{"cancelled", func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx
		}, false, failure.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.NewHangingServer(t)
			m := newTestOpenAI(t, p)
			if tt.down {
				p.Close()
			}
			_, err := m.Generate(tt.ctx(t), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}})
			providertest.CheckFailure(t, err, tt.kind, tt.kind == failure.Transient, "openai/gpt-4o-mini", providertest.OpenAIKey)
		})
	}
}
