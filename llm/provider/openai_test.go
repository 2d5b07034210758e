package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

const testOpenAIKey = "sk-test-0123456789abcdefSECRETKEY"

const openAIFinal = `{"id":"chatcmpl-F1","object":"chat.completion","created":1767225601,"model":"gpt-4o-mini",
"choices":[{"index":0,"message":{"role":"assistant","content":"Paris is 18°C; Oslo is unknown."},"finish_reason":"stop"}],
"usage":{"prompt_tokens":150,"completion_tokens":9,"total_tokens":159}}`

func newTestOpenAI(t *testing.T, p *provider) llm.Model {
	t.Helper()
	m, err := newOpenAI(Config{APIKey: testOpenAIKey, BaseURL: p.URL + "/v1", Model: "gpt-4o-mini", HTTPClient: p.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestOpenAIToolCallsRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		first  reply
	}{
		{"json", false, reply{200, "application/json", fixture(t, "openai_chat_tools.json")}},
		{"sse", true, reply{200, "text/event-stream", fixture(t, "openai_stream_tools.sse")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, tt.first, reply{200, "application/json", []byte(openAIFinal)})
			m := newTestOpenAI(t, p)
			var deltas []string
			req := &llm.Request{System: "You are terse.", Tools: weatherTools(),
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
			jsonEqual(t, "args[0]", calls[0].Args, `{"city":"Paris"}`)
			if tt.stream {
				jsonEqual(t, "args[1]", calls[1].Args, `{"city":"Oslo"}`)
			} else {
				jsonEqual(t, "args[1]", calls[1].Args, `{"city":"Oslo","unit":"celsius"}`)
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

			reqs := p.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			first, second := reqs[0], reqs[1]
			for _, r := range reqs {
				if r.path != "/v1/chat/completions" {
					t.Errorf("path = %q", r.path)
				}
				if got := r.header.Get("Authorization"); got != "Bearer "+testOpenAIKey {
					t.Errorf("Authorization = %q", got)
				}
				if _, ok := r.body["tool_choice"]; ok {
					t.Errorf("tool_choice sent: %s", r.raw)
				}
				if path(r.body, "model") != "gpt-4o-mini" {
					t.Errorf("model = %v", path(r.body, "model"))
				}
				if path(r.body, "tools", 0, "type") != "function" || path(r.body, "tools", 0, "function", "name") != "get_weather" ||
					path(r.body, "tools", 0, "function", "parameters", "required", 0) != "city" {
					t.Errorf("tools = %v", path(r.body, "tools"))
				}
				if path(r.body, "messages", 0, "role") != "system" || path(r.body, "messages", 0, "content") != "You are terse." {
					t.Errorf("system message = %v", path(r.body, "messages", 0))
				}
			}
			if tt.stream {
				if path(first.body, "stream") != true || path(first.body, "stream_options", "include_usage") != true {
					t.Errorf("stream options not sent: %s", first.raw)
				}
			} else if path(first.body, "stream") != nil {
				t.Errorf("stream sent on a non-streaming call: %s", first.raw)
			}
			msgs, _ := path(second.body, "messages").([]any)
			if len(msgs) != 5 {
				t.Fatalf("second request has %d messages, want 5: %s", len(msgs), second.raw)
			}
			asst := msgs[2]
			if path(asst, "role") != "assistant" || path(asst, "content") != wantText ||
				path(asst, "tool_calls", 0, "id") != "call_paris" || path(asst, "tool_calls", 1, "id") != "call_oslo" ||
				path(asst, "tool_calls", 1, "function", "name") != "get_weather" {
				t.Errorf("assistant message = %v", asst)
			}
			if a, _ := path(asst, "tool_calls", 0, "function", "arguments").(string); !strings.Contains(a, "Paris") {
				t.Errorf("arguments of the first call = %q", a)
			}
			for i, id := range []string{"call_paris", "call_oslo"} {
				if path(msgs[3+i], "role") != "tool" || path(msgs[3+i], "tool_call_id") != id {
					t.Errorf("tool message %d = %v", i, msgs[3+i])
				}
			}
		})
	}
}

func TestOpenAIErrors(t *testing.T) {
	echoKey := `{"error":{"message":"Incorrect API key provided: ` + testOpenAIKey + `. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
	tests := []struct {
		name      string
		stream    bool
		rep       reply
		kind      failure.Kind
		retryable bool
	}{
		{"429", false, reply{429, "application/json", []byte(`{"error":{"message":"Rate limit reached for gpt-4o-mini on requests per min (RPM): Limit 3, Used 3.","type":"requests","code":"rate_limit_exceeded"}}`)}, failure.Transient, true},
		{"429 streaming", true, reply{429, "application/json", []byte(`{"error":{"message":"Rate limit reached","type":"requests"}}`)}, failure.Transient, true},
		{"401 echoing the key", false, reply{401, "application/json", []byte(echoKey)}, failure.PermissionDenied, false},
		{"401 streaming", true, reply{401, "application/json", []byte(echoKey)}, failure.PermissionDenied, false},
		{"403", false, reply{403, "application/json", []byte(`{"error":{"message":"Project does not have access to model","type":"invalid_request_error"}}`)}, failure.PermissionDenied, false},
		{"400", false, reply{400, "application/json", []byte(`{"error":{"message":"Invalid schema for function 'get_weather'","type":"invalid_request_error","param":"tools[0].function.parameters","code":"invalid_function_parameters"}}`)}, failure.Model, false},
		{"500 not JSON", false, reply{500, "text/html", []byte(`<html>upstream error</html>`)}, failure.Transient, true},
		{"503 streaming", true, reply{503, "application/json", []byte(`{"error":{"message":"The engine is currently overloaded","type":"server_error"}}`)}, failure.Transient, true},
		{"stream cut short", true, reply{200, "text/event-stream", []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n")}, failure.Transient, true},
		{"error inside the stream", true, reply{200, "text/event-stream", []byte("data: {\"error\":{\"message\":\"The server had an error processing your request.\",\"type\":\"server_error\"}}\n\n")}, failure.Transient, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, tt.rep)
			m := newTestOpenAI(t, p)
			req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}
			if tt.stream {
				req.OnText = func(string) {}
			}
			_, err := m.Generate(t.Context(), req)
			checkFailure(t, err, tt.kind, tt.retryable, "openai/gpt-4o-mini", testOpenAIKey)
		})
	}
}

// checkFailure checks the classification of err and that the key appears
// nowhere in what a log or the model would see.
func checkFailure(t *testing.T, err error, kind failure.Kind, retryable bool, name, key string) {
	t.Helper()
	var fe *failure.Error
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v (%T), want a *failure.Error", err, err)
	}
	if !errors.Is(err, kind) {
		t.Errorf("kind = %v, want %v (%v)", fe.Kind, kind, err)
	}
	if fe.Source != failure.SourceModel || fe.Name != name {
		t.Errorf("source, name = %q, %q", fe.Source, fe.Name)
	}
	if fe.Retryable != retryable {
		t.Errorf("retryable = %v, want %v", fe.Retryable, retryable)
	}
	for what, text := range map[string]string{"Error()": err.Error(), "ModelText": fe.ModelText(), "Message": fe.Message} {
		if strings.Contains(text, key) || strings.Contains(text, key[len(key)-8:]) {
			t.Errorf("%s leaks the key: %s", what, text)
		}
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
			p := newHangingProvider(t)
			m := newTestOpenAI(t, p)
			if tt.down {
				p.Close()
			}
			_, err := m.Generate(tt.ctx(t), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}})
			checkFailure(t, err, tt.kind, tt.kind == failure.Transient, "openai/gpt-4o-mini", testOpenAIKey)
		})
	}
}

// newHangingProvider answers nothing until the client gives up.
func newHangingProvider(t *testing.T) *provider {
	p := &provider{}
	p.Server = httptestServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server notices a client that went away only once the body
		// has been read.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(p.Close)
	return p
}

// TestPolicyRetriesTransientFailures checks Config.Policy: a 429 then a 503
// are retried through the policy, and the third answer is returned; with no
// Policy, through the process default, which an explicit Policy overrides.
func TestPolicyRetriesTransientFailures(t *testing.T) {
	busy := reply{429, "application/json", []byte(`{"error":{"message":"Rate limit reached","type":"requests"}}`)}
	down := reply{503, "application/json", []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)}
	retrying := func() failure.Policy {
		return failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	}
	tests := []struct {
		provider string
		ok       reply
		how      string // "config": Config.Policy retries; "default": the default does; "override": Config.Policy does not, the default would
	}{
		{nameOpenAI, reply{200, "application/json", []byte(openAIFinal)}, "config"},
		{nameAnthropic, reply{200, "application/json", []byte(anthropicFinal)}, "config"},
		{nameOpenAI, reply{200, "application/json", []byte(openAIFinal)}, "default"},
		{nameAnthropic, reply{200, "application/json", []byte(anthropicFinal)}, "default"},
		{nameOpenAI, reply{200, "application/json", []byte(openAIFinal)}, "override"},
	}
	for _, tt := range tests {
		t.Run(tt.provider+"/"+tt.how, func(t *testing.T) {
			t.Cleanup(func() { failure.SetDefault(onceDefault) })
			p := newProvider(t, busy, down, tt.ok)
			base := p.URL
			if tt.provider == nameOpenAI {
				base += "/v1"
			}
			cfg := Config{Provider: tt.provider, APIKey: "k-0123456789", BaseURL: base, HTTPClient: p.Client()}
			switch tt.how {
			case "config":
				cfg.Policy = retrying()
			case "default":
				failure.SetDefault(retrying())
			case "override":
				cfg.Policy = onceDefault
				failure.SetDefault(retrying())
			}
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := m.Generate(t.Context(), userReq("hi"))
			if tt.how == "override" {
				if !errors.Is(err, failure.Transient) || len(p.requests()) != 1 {
					t.Errorf("Config.Policy of one attempt: %v after %d requests, want the 429 after 1", err, len(p.requests()))
				}
				return
			}
			if err != nil {
				t.Fatalf("after retries: %v", err)
			}
			if resp.Message.Text != "Paris is 18°C; Oslo is unknown." || len(p.requests()) != 3 {
				t.Errorf("text %q after %d requests", resp.Message.Text, len(p.requests()))
			}
		})
	}
}

func TestAnthropicTransportErrors(t *testing.T) {
	p := newHangingProvider(t)
	m := newTestAnthropic(t, p)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := m.Generate(ctx, userReq("hi"))
	checkFailure(t, err, failure.Timeout, false, "anthropic/claude-sonnet-4-5", testAnthropicKey)
	p.Close()
	_, err = m.Generate(t.Context(), userReq("hi"))
	checkFailure(t, err, failure.Transient, true, "anthropic/claude-sonnet-4-5", testAnthropicKey)
}

// TestStreamCancelledMidway cancels the call from OnText after the first
// delta while the server holds the stream open: the call ends Canceled, no
// text arrives after Generate returns, and no goroutine is left behind
// (TestMain runs goleak).
func TestStreamCancelledMidway(t *testing.T) {
	first := map[string]string{
		nameOpenAI:    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n",
		nameAnthropic: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n",
	}
	for _, prov := range []string{nameOpenAI, nameAnthropic} {
		t.Run(prov, func(t *testing.T) {
			p := &provider{}
			p.Server = httptestServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, first[prov])
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			}))
			t.Cleanup(p.Close)
			base := p.URL
			if prov == nameOpenAI {
				base += "/v1"
			}
			m, err := New(Config{Provider: prov, APIKey: "k-0123456789", BaseURL: base, HTTPClient: p.Client()})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var mu sync.Mutex
			var got []string
			returned := false
			req := userReq("hi")
			req.OnText = func(d string) {
				mu.Lock()
				defer mu.Unlock()
				if returned {
					t.Errorf("OnText(%q) after Generate returned", d)
				}
				got = append(got, d)
				cancel()
			}
			_, err = m.Generate(ctx, req)
			mu.Lock()
			returned = true
			mu.Unlock()
			checkFailure(t, err, failure.Canceled, false, m.Name(), "k-0123456789")
			if fmt.Sprint(got) != "[Hel]" {
				t.Errorf("streamed %q", got)
			}
		})
	}
}
