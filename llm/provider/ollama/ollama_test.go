package ollama

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

// testKey is what a test server behind a proxy is given: no failure may
// show it.
const testKey = "ollama-proxy-key-0123456789SECRET"

func newTestModel(t *testing.T, p *providertest.Server, model string) *ollamaModel {
	t.Helper()
	m, err := newOllama(provider.Config{BaseURL: p.URL, Model: model, APIKey: testKey, HTTPClient: p.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func jsonReply(t *testing.T, fixture string) providertest.Reply {
	return providertest.Reply{Status: 200, ContentType: "application/json; charset=utf-8", Body: providertest.Fixture(t, fixture)}
}

func ndjsonReply(t *testing.T, fixture string) providertest.Reply {
	return providertest.Reply{Status: 200, ContentType: "application/x-ndjson", Body: providertest.Fixture(t, fixture)}
}

// TestOllamaToolCallsRoundTrip: tools go out in Ollama's shape, tool calls
// come back (JSON or streamed, with the server's ids or made-up unique
// ones) with their thinking and usage, and the next turn sends the calls,
// the thinking and each result (named by its tool) back.
func TestOllamaToolCallsRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		first  providertest.Reply
	}{
		{"json", false, jsonReply(t, "ollama_chat_tools.json")},
		{"ndjson", true, ndjsonReply(t, "ollama_stream_tools.ndjson")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.NewServer(t, tt.first, jsonReply(t, "ollama_chat_final.json"))
			m := newTestModel(t, p, "qwen3:8b")
			var deltas []string
			req := &llm.Request{System: "You are terse.", Tools: providertest.WeatherTools(), Temperature: new(0.2), MaxTokens: 200,
				Messages: []llm.Message{{Role: llm.RoleUser, Text: "Weather in Paris and Oslo?"}}}
			if tt.stream {
				req.OnText = func(d string) { deltas = append(deltas, d) }
			}
			resp, err := m.Generate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			calls := resp.Message.ToolCalls
			if len(calls) != 2 || calls[0].Name != "get_weather" || calls[1].Name != "get_weather" ||
				calls[0].ID == "" || calls[0].ID == calls[1].ID {
				t.Fatalf("tool calls = %+v", calls)
			}
			providertest.JSONEqual(t, "args[0]", calls[0].Args, `{"city":"Paris"}`)
			if tt.stream {
				if calls[0].ID != "call_p4r1s" || calls[1].ID != "call_0sl0" {
					t.Errorf("the server's ids were not kept: %+v", calls)
				}
				if strings.Join(deltas, "") != "Checking both." || len(deltas) != 2 || resp.Message.Text != "Checking both." {
					t.Errorf("streamed %q, text %q", deltas, resp.Message.Text)
				}
			} else {
				providertest.JSONEqual(t, "args[1]", calls[1].Args, `{"city":"Oslo","unit":"celsius"}`)
			}
			if resp.Message.Reasoning != "Two cities: call the tool twice." {
				t.Errorf("reasoning = %q", resp.Message.Reasoning)
			}
			if resp.Usage != (llm.Usage{InputTokens: 122, OutputTokens: 33}) || resp.StopReason != "stop" || resp.Model != "qwen3:8b" {
				t.Errorf("usage %+v, stop %q, model %q", resp.Usage, resp.StopReason, resp.Model)
			}

			req2 := &llm.Request{System: req.System, Tools: req.Tools, Messages: []llm.Message{
				req.Messages[0], resp.Message,
				{Role: llm.RoleTool, ToolResults: []llm.ToolResult{
					{CallID: calls[0].ID, Name: "get_weather", Content: "18°C"},
					{CallID: calls[1].ID, Name: "get_weather", Content: "Error: station offline", IsError: true}}},
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
			for _, r := range reqs {
				if r.Path != "/api/chat" || r.Header.Get("Authorization") != "Bearer "+testKey {
					t.Errorf("path %q, authorization %q", r.Path, r.Header.Get("Authorization"))
				}
				b := r.Body
				if providertest.Path(b, "model") != "qwen3:8b" || providertest.Path(b, "tools", 0, "type") != "function" ||
					providertest.Path(b, "tools", 0, "function", "name") != "get_weather" ||
					providertest.Path(b, "tools", 0, "function", "parameters", "required", 0) != "city" ||
					providertest.Path(b, "messages", 0, "role") != "system" || providertest.Path(b, "messages", 0, "content") != "You are terse." {
					t.Errorf("request = %s", r.Raw)
				}
			}
			first := reqs[0].Body
			if providertest.Path(first, "stream") != tt.stream {
				t.Errorf("stream = %v", providertest.Path(first, "stream"))
			}
			if providertest.Path(first, "options", "temperature") != 0.2 || providertest.Path(first, "options", "num_predict") != 200.0 {
				t.Errorf("options = %v", providertest.Path(first, "options"))
			}
			if providertest.Path(first, "think") != nil || providertest.Path(first, "format") != nil {
				t.Errorf("think or format sent unasked: %s", reqs[0].Raw)
			}
			msgs, _ := providertest.Path(reqs[1].Body, "messages").([]any)
			if len(msgs) != 5 {
				t.Fatalf("second request has %d messages: %s", len(msgs), reqs[1].Raw)
			}
			asst := msgs[2]
			if providertest.Path(asst, "role") != "assistant" || providertest.Path(asst, "thinking") != "Two cities: call the tool twice." ||
				providertest.Path(asst, "tool_calls", 0, "function", "name") != "get_weather" ||
				providertest.Path(asst, "tool_calls", 0, "function", "arguments", "city") != "Paris" {
				t.Errorf("assistant message = %v", asst)
			}
			for i, want := range []string{"18°C", "Error: station offline"} {
				tm := msgs[3+i]
				if providertest.Path(tm, "role") != "tool" || providertest.Path(tm, "tool_name") != "get_weather" || providertest.Path(tm, "content") != want {
					t.Errorf("tool message %d = %v", i, tm)
				}
			}
		})
	}
}

const weatherSchema = `{"type":"object","properties":{"city":{"type":"string"},"temperature_c":{"type":"integer"}},"required":["city","temperature_c"]}`

// TestOllamaStructuredOutput: the answer schema goes as "format", the
// answer comes back as the message's text, JSON or streamed, and a repair
// round trip sends the schema again.
func TestOllamaStructuredOutput(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "ndjson"}[stream], func(t *testing.T) {
			good := jsonReply(t, "ollama_chat_structured.json")
			if stream {
				good = ndjsonReply(t, "ollama_stream_structured.ndjson")
			}
			p := providertest.NewServer(t, jsonReply(t, "ollama_chat_structured_invalid.json"), good)
			m := newTestModel(t, p, "llama3.1")
			req := &llm.Request{Output: &llm.Output{Name: "weather", Schema: json.RawMessage(weatherSchema)},
				Messages: []llm.Message{{Role: llm.RoleUser, Text: "Weather in Paris as JSON."}}}
			first, err := m.Generate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			providertest.JSONEqual(t, "first answer", json.RawMessage(first.Message.Text), `{"city":"Paris"}`)
			req.Messages = append(req.Messages, first.Message,
				llm.Message{Role: llm.RoleUser, Text: "Your answer is not valid against the schema: missing property temperature_c. Answer again."})
			var deltas []string
			if stream {
				req.OnText = func(d string) { deltas = append(deltas, d) }
			}
			second, err := m.Generate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			providertest.JSONEqual(t, "repaired answer", json.RawMessage(second.Message.Text), `{"city":"Paris","temperature_c":18}`)
			if stream && (len(deltas) != 3 || strings.Join(deltas, "") != second.Message.Text) {
				t.Errorf("streamed %q", deltas)
			}
			if second.Usage != (llm.Usage{InputTokens: 61, OutputTokens: 12}) {
				t.Errorf("usage = %+v", second.Usage)
			}
			for i, r := range p.Requests() {
				f, _ := json.Marshal(providertest.Path(r.Body, "format"))
				providertest.JSONEqual(t, "format of request "+string(rune('0'+i)), f, weatherSchema)
			}
			if msgs, _ := providertest.Path(p.Requests()[1].Body, "messages").([]any); len(msgs) != 3 ||
				!strings.Contains(providertest.Path(msgs[2], "content").(string), "temperature_c") {
				t.Errorf("repair messages = %v", msgs)
			}
		})
	}
	p := providertest.NewServer(t, jsonReply(t, "ollama_chat_structured.json"))
	m := newTestModel(t, p, "llama3.1")
	_, err := m.Generate(t.Context(), &llm.Request{Output: &llm.Output{Schema: json.RawMessage(`"json"`)}, Messages: []llm.Message{{Role: llm.RoleUser, Text: "x"}}})
	providertest.CheckFailure(t, err, failure.Config, false, "ollama/llama3.1", testKey)
	if len(p.Requests()) != 0 {
		t.Error("a request with a bad schema was sent")
	}
}

// TestOllamaImages: a user message's image goes in its images (base64); a
// tool result's image goes in a user message after the tool messages;
// a text document is inlined and parts Ollama cannot take are described.
func TestOllamaImages(t *testing.T) {
	p := providertest.NewServer(t, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.OllamaFinal)})
	m := newTestModel(t, p, "llama3.2-vision")
	photo, radar := []byte("\x89PNG\r\n\x1a\nphoto"), []byte("\x89PNG\r\n\x1a\nradar")
	req := &llm.Request{Tools: providertest.WeatherTools(), Messages: []llm.Message{
		{Role: llm.RoleUser, Text: "What is in this picture?", Parts: []llm.Part{
			llm.ImagePart("image/png", photo),
			{Kind: llm.PartImage, MediaType: "image/jpeg", URL: "https://example.com/cat.jpg"},
			llm.DocumentPart("notes.txt", "text/plain", []byte("it rained")),
			llm.DocumentPart("report.pdf", "application/pdf", []byte("%PDF-1.7")),
		}},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)}}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "c1", Name: "get_weather", Content: "18°C, radar attached",
			Parts: []llm.Part{llm.ImagePart("image/png", radar)}}}},
	}}
	if _, err := m.Generate(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	msgs, _ := providertest.Path(p.Requests()[0].Body, "messages").([]any)
	if len(msgs) != 4 {
		t.Fatalf("%d messages: %s", len(msgs), p.Requests()[0].Raw)
	}
	b64 := base64.StdEncoding.EncodeToString
	user := msgs[0]
	text, _ := providertest.Path(user, "content").(string)
	for _, want := range []string{"What is in this picture?", "[image image/jpeg at https://example.com/cat.jpg]",
		"[document \"notes.txt\" text/plain]\nit rained", "[document \"report.pdf\" application/pdf, 8 bytes]"} {
		if !strings.Contains(text, want) {
			t.Errorf("user content lacks %q: %q", want, text)
		}
	}
	if providertest.Path(user, "images", 0) != b64(photo) || providertest.Path(user, "images", 1) != nil {
		t.Errorf("user images = %v", providertest.Path(user, "images"))
	}
	if tm := msgs[2]; providertest.Path(tm, "role") != "tool" || providertest.Path(tm, "images") != nil ||
		!strings.Contains(providertest.Path(tm, "content").(string), "follow in the next user message") {
		t.Errorf("tool message = %v", tm)
	}
	if after := msgs[3]; providertest.Path(after, "role") != "user" || providertest.Path(after, "images", 0) != b64(radar) ||
		!strings.Contains(providertest.Path(after, "content").(string), "c1") {
		t.Errorf("tool-result image message = %v", after)
	}
}

// TestOllamaThink: Request.Reasoning becomes "think" for the models that
// think (an effort for gpt-oss), and nothing for the others.
func TestOllamaThink(t *testing.T) {
	tests := []struct {
		model string
		r     *llm.Reasoning
		want  any
	}{
		{"qwen3:8b", &llm.Reasoning{Effort: llm.EffortHigh}, true},
		{"deepseek-r1:14b", &llm.Reasoning{BudgetTokens: 4000}, true},
		{"gpt-oss:20b", &llm.Reasoning{Effort: llm.EffortMinimal}, "low"},
		{"gpt-oss:20b", &llm.Reasoning{BudgetTokens: 30000}, "high"},
		{"gpt-oss:20b", &llm.Reasoning{}, true},
		{"qwen3:8b", nil, nil},
		{"llama3.2", &llm.Reasoning{Effort: llm.EffortHigh}, nil},
		{"qwen3-coder:30b", &llm.Reasoning{Effort: llm.EffortHigh}, nil},
	}
	for _, tt := range tests {
		p := providertest.NewServer(t, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.OllamaFinal)})
		m := newTestModel(t, p, tt.model)
		req := providertest.UserReq("hi")
		req.Reasoning = tt.r
		if _, err := m.Generate(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		if got := providertest.Path(p.Requests()[0].Body, "think"); got != tt.want {
			t.Errorf("%s %+v: think = %v, want %v", tt.model, tt.r, got, tt.want)
		}
		if m.Capabilities().Reasoning != (tt.want != nil || (tt.r == nil && tt.model == "qwen3:8b")) {
			t.Errorf("%s: Capabilities().Reasoning = %v", tt.model, m.Capabilities().Reasoning)
		}
	}
}

// TestOllamaErrors: the server's failures, as it reports them, are
// classified into the taxonomy without the key.
func TestOllamaErrors(t *testing.T) {
	tests := []struct {
		name      string
		stream    bool
		rep       providertest.Reply
		kind      failure.Kind
		retryable bool
		says      string
	}{
		{"model not pulled", false, providertest.Reply{Status: 404, ContentType: "application/json", Body: []byte(`{"error":"model \"llama9\" not found, try pulling it first"}`)}, failure.Model, false, "try pulling it first"},
		{"queue full", false, providertest.Reply{Status: 503, ContentType: "application/json", Body: []byte(`{"error":"server busy, please try again.  maximum pending requests exceeded"}`)}, failure.Transient, true, "server busy"},
		{"429 from a proxy", true, providertest.Reply{Status: 429, ContentType: "text/plain", Body: []byte("Too Many Requests")}, failure.Transient, true, "Too Many Requests"},
		{"runner crashed", false, providertest.Reply{Status: 500, ContentType: "application/json", Body: []byte(`{"error":"llama runner process has terminated: exit status 2"}`)}, failure.Transient, true, "runner process"},
		{"proxy refuses the key", false, providertest.Reply{Status: 401, ContentType: "application/json", Body: []byte(`{"error":"invalid key ` + testKey + `"}`)}, failure.PermissionDenied, false, "invalid key"},
		{"model cannot think", false, providertest.Reply{Status: 400, ContentType: "application/json", Body: []byte(`{"error":"\"llama3.2\" does not support thinking"}`)}, failure.Model, false, "does not support thinking"},
		{"context length", false, providertest.Reply{Status: 400, ContentType: "application/json", Body: []byte(`{"error":"the input length exceeds the context length"}`)}, failure.Budget, false, "context window"},
		{"error inside the stream", true, providertest.Reply{Status: 200, ContentType: "application/x-ndjson", Body: []byte("{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"done\":false}\n{\"error\":\"an error was encountered while running the model: unexpected EOF\"}\n")}, failure.Transient, true, "unexpected EOF"},
		{"stream cut short", true, providertest.Reply{Status: 200, ContentType: "application/x-ndjson", Body: []byte("{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"done\":false}\n")}, failure.Transient, true, "before it was complete"},
		{"answer not JSON", false, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte("<html>proxy</html>")}, failure.Protocol, false, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.NewServer(t, tt.rep)
			m := newTestModel(t, p, "llama3.2")
			req := providertest.UserReq("hi")
			if tt.stream {
				req.OnText = func(string) {}
			}
			_, err := m.Generate(t.Context(), req)
			providertest.CheckFailure(t, err, tt.kind, tt.retryable, "ollama/llama3.2", testKey)
			if err != nil && !strings.Contains(err.Error(), tt.says) {
				t.Errorf("err = %v, want it to say %q", err, tt.says)
			}
		})
	}
}

func TestOllamaTransportErrors(t *testing.T) {
	p := providertest.NewHangingServer(t)
	m := newTestModel(t, p, "llama3.2")
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := m.Generate(ctx, providertest.UserReq("hi"))
	providertest.CheckFailure(t, err, failure.Timeout, false, "ollama/llama3.2", testKey)
	p.Close()
	_, err = m.Generate(t.Context(), providertest.UserReq("hi"))
	providertest.CheckFailure(t, err, failure.Transient, true, "ollama/llama3.2", testKey)
}

func TestHostURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "http://127.0.0.1:11434"},
		{"0.0.0.0", "http://0.0.0.0:11434"},
		{"gpu-box:8080", "http://gpu-box:8080"},
		{"gpu-box", "http://gpu-box:11434"},
		{"http://gpu-box", "http://gpu-box:80"},
		{"https://ollama.example.com", "https://ollama.example.com:443"},
		{"https://ollama.example.com/proxy/", "https://ollama.example.com:443/proxy"},
		{"[::1]:11434", "http://[::1]:11434"},
		{"::1", "http://[::1]:11434"},
	}
	for _, tt := range tests {
		if got := hostURL(tt.in); got != tt.want {
			t.Errorf("hostURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestProvider: OLLAMA_MODEL configures the provider, OLLAMA_HOST alone
// does not; the base URL is the server's root however it is given.
func TestProvider(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	cfg, ok := Provider().Env(env("OLLAMA_HOST", "gpu-box:8080", "OLLAMA_MODEL", "qwen3:8b"))
	if !ok || cfg.BaseURL != "http://gpu-box:8080" || cfg.Model != "qwen3:8b" || cfg.Provider != Name {
		t.Errorf("cfg = %+v, %v", cfg, ok)
	}
	if _, ok := Provider().Env(env("OLLAMA_HOST", "0.0.0.0")); ok {
		t.Error("OLLAMA_HOST alone configures the provider")
	}
	for _, base := range []string{"http://h:1", "http://h:1/", "http://h:1/api", "http://h:1/v1"} {
		m, err := newOllama(provider.Config{BaseURL: base})
		if err != nil || m.url != "http://h:1/api/chat" || m.Name() != "ollama/llama3.2" {
			t.Errorf("%q: url %q, name %q, %v", base, m.url, m.Name(), err)
		}
	}
}

func TestCapabilities(t *testing.T) {
	img := []llm.PartKind{llm.PartImage}
	tests := []struct {
		model    string
		accepts  []llm.PartKind
		thinking bool
	}{
		{"llama3.2", nil, false},
		{"llama3.2-vision:11b", img, false},
		{"llava:13b", img, false},
		{"gemma3:27b", img, false},
		{"qwen2.5vl:7b", img, false},
		{"qwen3-vl:8b", img, true},
		{"qwen3:8b", nil, true},
		{"hf.co/unsloth/DeepSeek-R1-Distill-Qwen-7B-GGUF", nil, true},
		{"gpt-oss:20b", nil, true},
	}
	for _, tt := range tests {
		c := capabilitiesOf(tt.model)
		if !slices.Equal(c.Accepts, tt.accepts) || c.Reasoning != tt.thinking || !c.StructuredOutput || c.PromptCache || c.ToolSearch || c.ContextWindow != 0 {
			t.Errorf("%s: %+v", tt.model, c)
		}
	}
}
