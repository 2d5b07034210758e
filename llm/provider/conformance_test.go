package provider_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/eventstream"
	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/anthropic"
	"github.com/switchboard-dev/switchboard/llm/provider/bedrock"
	"github.com/switchboard-dev/switchboard/llm/provider/gemini"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
	"github.com/switchboard-dev/switchboard/llm/provider/ollama"
	"github.com/switchboard-dev/switchboard/llm/provider/openai"
)

// The tests here hold every provider to the same behaviour.

func TestMain(m *testing.M) {
	failure.SetDefault(providertest.Once)
	goleak.VerifyTestMain(m)
}

// newModel returns the model of cfg.Provider.
func newModel(cfg provider.Config) (llm.Model, error) {
	for _, p := range []provider.Provider{openai.Provider(), anthropic.Provider(), gemini.Provider(), ollama.Provider()} {
		if p.Name == cfg.Provider {
			return p.New(cfg)
		}
	}
	return nil, failure.New(failure.Config, failure.SourceModel, "unknown provider "+cfg.Provider)
}

func newOpenAI(t *testing.T, p *providertest.Server) llm.Model {
	m, err := openai.New(provider.Config{APIKey: providertest.OpenAIKey, BaseURL: p.URL + "/v1", Model: "gpt-4o-mini", HTTPClient: p.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newGemini(t *testing.T, p *providertest.Server) llm.Model {
	m, err := gemini.New(provider.Config{APIKey: providertest.GeminiKey, BaseURL: p.URL, Model: "gemini-2.5-flash", HTTPClient: p.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newOllama(t *testing.T, p *providertest.Server) llm.Model {
	m, err := ollama.New(provider.Config{BaseURL: p.URL, Model: "llama3.2", HTTPClient: p.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newAnthropic(t *testing.T, p *providertest.Server) llm.Model {
	m, err := anthropic.New(provider.Config{APIKey: providertest.AnthropicKey, BaseURL: p.URL, Model: "claude-sonnet-4-5", HTTPClient: p.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPolicyRetriesTransientFailures checks Config.Policy: a 429 then a 503
// are retried through the policy, and the third answer is returned; with no
// Policy, through the process default, which an explicit Policy overrides.
func TestPolicyRetriesTransientFailures(t *testing.T) {
	busy := providertest.Reply{Status: 429, ContentType: "application/json", Body: []byte(`{"error":{"message":"Rate limit reached","type":"requests"}}`)}
	down := providertest.Reply{Status: 503, ContentType: "application/json", Body: []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)}
	retrying := func() failure.Policy {
		return failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	}
	tests := []struct {
		provider string
		ok       providertest.Reply
		how      string // "config": Config.Policy retries; "default": the default does; "override": Config.Policy does not, the default would
	}{
		{openai.Name, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.OpenAIFinal)}, "config"},
		{anthropic.Name, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.AnthropicFinal)}, "config"},
		{gemini.Name, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.GeminiFinal)}, "config"},
		{openai.Name, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.OpenAIFinal)}, "default"},
		{anthropic.Name, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.AnthropicFinal)}, "default"},
		{gemini.Name, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.GeminiFinal)}, "default"},
		{openai.Name, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.OpenAIFinal)}, "override"},
		{ollama.Name, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.OllamaFinal)}, "config"},
		{ollama.Name, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.OllamaFinal)}, "default"},
	}
	for _, tt := range tests {
		t.Run(tt.provider+"/"+tt.how, func(t *testing.T) {
			t.Cleanup(func() { failure.SetDefault(providertest.Once) })
			p := providertest.NewServer(t, busy, down, tt.ok)
			base := p.URL
			if tt.provider == openai.Name {
				base += "/v1"
			}
			cfg := provider.Config{Provider: tt.provider, APIKey: "k-0123456789", BaseURL: base, HTTPClient: p.Client()}
			switch tt.how {
			case "config":
				cfg.Policy = retrying()
			case "default":
				failure.SetDefault(retrying())
			case "override":
				cfg.Policy = providertest.Once
				failure.SetDefault(retrying())
			}
			m, err := newModel(cfg)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := m.Generate(t.Context(), providertest.UserReq("hi"))
			if tt.how == "override" {
				if !errors.Is(err, failure.Transient) || len(p.Requests()) != 1 {
					t.Errorf("Config.Policy of one attempt: %v after %d requests, want the 429 after 1", err, len(p.Requests()))
				}
				return
			}
			if err != nil {
				t.Fatalf("after retries: %v", err)
			}
			if resp.Message.Text != "Paris is 18°C; Oslo is unknown." || len(p.Requests()) != 3 {
				t.Errorf("text %q after %d requests", resp.Message.Text, len(p.Requests()))
			}
		})
	}
}

// TestTransportErrors: a server that does not answer before the deadline
// is a Timeout, one that is gone is Transient, for the providers that speak
// HTTP themselves.
func TestTransportErrors(t *testing.T) {
	cases := []struct {
		name, key string
		model     func(*testing.T, *providertest.Server) llm.Model
	}{
		{"anthropic/claude-sonnet-4-5", providertest.AnthropicKey, newAnthropic},
		{"gemini/gemini-2.5-flash", providertest.GeminiKey, newGemini},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := providertest.NewHangingServer(t)
			m := tc.model(t, p)
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			defer cancel()
			_, err := m.Generate(ctx, providertest.UserReq("hi"))
			providertest.CheckFailure(t, err, failure.Timeout, false, tc.name, tc.key)
			p.Close()
			_, err = m.Generate(t.Context(), providertest.UserReq("hi"))
			providertest.CheckFailure(t, err, failure.Transient, true, tc.name, tc.key)
		})
	}
}

// TestStreamCancelledMidway cancels the call from OnText after the first
// delta while the server holds the stream open: the call ends Canceled, no
// text arrives after Generate returns, and no goroutine is left behind
// (TestMain runs goleak).
func TestStreamCancelledMidway(t *testing.T) {
	first := map[string]string{
		openai.Name:    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n",
		gemini.Name:    "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Hel\"}]}}]}\r\n\r\n",
		ollama.Name:    "{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"done\":false}\n",
		anthropic.Name: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n",
	}
	for _, prov := range []string{openai.Name, anthropic.Name, gemini.Name, ollama.Name} {
		t.Run(prov, func(t *testing.T) {
			p := &providertest.Server{}
			p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				ct := "text/event-stream"
				if prov == ollama.Name {
					ct = "application/x-ndjson"
				}
				w.Header().Set("Content-Type", ct)
				_, _ = io.WriteString(w, first[prov])
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			}))
			t.Cleanup(p.Close)
			base := p.URL
			if prov == openai.Name {
				base += "/v1"
			}
			m, err := newModel(provider.Config{Provider: prov, APIKey: "k-0123456789", BaseURL: base, HTTPClient: p.Client()})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var mu sync.Mutex
			var got []string
			returned := false
			req := providertest.UserReq("hi")
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
			providertest.CheckFailure(t, err, failure.Canceled, false, m.Name(), "k-0123456789")
			if fmt.Sprint(got) != "[Hel]" {
				t.Errorf("streamed %q", got)
			}
		})
	}
}

// TestStopSequences: each provider sends the request's stop sequences in
// its own wire field, and sends none when there are none.
func TestStopSequences(t *testing.T) {
	cases := []struct {
		name  string
		final string
		model func(*testing.T, *providertest.Server) llm.Model
		field []any // the path of the field in the request body
	}{
		{"openai", providertest.OpenAIFinal, newOpenAI, []any{"stop"}},
		{"anthropic", providertest.AnthropicFinal, newAnthropic, []any{"stop_sequences"}},
		{"gemini", providertest.GeminiFinal, newGemini, []any{"generationConfig", "stopSequences"}},
		{"ollama", providertest.OllamaFinal, newOllama, []any{"options", "stop"}},
		{"bedrock", bedrockFinal, newBedrock, []any{"inferenceConfig", "stopSequences"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, stops := range [][]string{{"\n\nHuman:", "END"}, nil} {
				p := providertest.NewServer(t, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(tc.final)})
				m := tc.model(t, p)
				if _, err := m.Generate(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}},
					StopSequences: stops}); err != nil {
					t.Fatal(err)
				}
				body := p.Requests()[0].Body
				got := providertest.Path(body, tc.field...)
				if stops == nil {
					if got != nil {
						t.Fatalf("%s sent without stop sequences: %v", tc.field, got)
					}
					continue
				}
				if providertest.Path(body, append(tc.field, 0)...) != stops[0] || providertest.Path(body, append(tc.field, 1)...) != stops[1] {
					t.Fatalf("%s = %v, want %q", tc.field, got, stops)
				}
			}
		})
	}
}

// modelLayerCases are the providers of the model-layer tests below, with
// a final answer whose text is the JSON {"ok":true}. (Anthropic's row
// comes with its structured output.)
var modelLayerCases = []struct {
	name   string
	answer string
	model  func(*testing.T, *providertest.Server) llm.Model
	schema []any // where the answer schema goes in the request body
}{
	{"openai", `{"id":"chatcmpl-J","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"{\"ok\":true}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":4}}`,
		newOpenAI, []any{"response_format", "json_schema", "schema"}},
	{"ollama", `{"model":"llama3.2","message":{"role":"assistant","content":"{\"ok\":true}"},"done":true,"done_reason":"stop","prompt_eval_count":20,"eval_count":4}`,
		newOllama, []any{"format"}},
	// Bedrock's answer comes as a call of the forced answer tool.
	{"bedrock", `{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"tooluse_1","name":"answer","input":{"ok":true}}}]}},"stopReason":"tool_use","usage":{"inputTokens":20,"outputTokens":4,"totalTokens":24}}`,
		newBedrock, []any{"toolConfig", "tools", 0, "toolSpec", "inputSchema", "json"}},
}

// TestAnswerSchema: each provider sends Request.Output's schema in its own
// field, says it enforces it, and returns the JSON answer as the text.
func TestAnswerSchema(t *testing.T) {
	schema := `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`
	for _, tc := range modelLayerCases {
		t.Run(tc.name, func(t *testing.T) {
			p := providertest.NewServer(t, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(tc.answer)})
			m := tc.model(t, p)
			resp, err := m.Generate(t.Context(), &llm.Request{Output: &llm.Output{Schema: json.RawMessage(schema)},
				Messages: []llm.Message{{Role: llm.RoleUser, Text: "ok?"}}})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Text != `{"ok":true}` || !llm.CapabilitiesOf(m).StructuredOutput {
				t.Errorf("text %q, capabilities %+v", resp.Message.Text, llm.CapabilitiesOf(m))
			}
			sent, _ := json.Marshal(providertest.Path(p.Requests()[0].Body, tc.schema...))
			providertest.JSONEqual(t, "schema sent", sent, schema)
		})
	}
}

// TestToolResultImageReachesModel: an image a tool returned goes to the
// model as an image (its bytes in the request), not as a description,
// through every provider, and the tool's text result still answers its call.
func TestToolResultImageReachesModel(t *testing.T) {
	img := []byte("\x89PNG\r\n\x1a\nradar-image")
	enc := base64.StdEncoding.EncodeToString(img)
	for _, tc := range modelLayerCases {
		t.Run(tc.name, func(t *testing.T) {
			p := providertest.NewServer(t, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(tc.answer)})
			m := tc.model(t, p)
			_, err := m.Generate(t.Context(), &llm.Request{Tools: providertest.WeatherTools(), Messages: []llm.Message{
				{Role: llm.RoleUser, Text: "Radar of Paris?"},
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)}}},
				{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "call_1", Name: "get_weather", Content: "rain; radar attached",
					Parts: []llm.Part{llm.ImagePart("image/png", img)}}}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			raw := string(p.Requests()[0].Raw)
			if !strings.Contains(raw, enc) || strings.Contains(raw, "[image image/png") || !strings.Contains(raw, "rain; radar attached") {
				t.Errorf("the image did not reach the model as an image: %s", raw)
			}
		})
	}
}

func newBedrock(t *testing.T, p *providertest.Server) llm.Model {
	awsCfg := aws.Config{Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTESTEXAMPLE00001", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYTESTSECRETKEY", "")}
	m, err := bedrock.NewFromConfig(awsCfg, provider.Config{BaseURL: p.URL, Model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", HTTPClient: p.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// bedrockFinal is a Converse answer.
const bedrockFinal = `{"output":{"message":{"role":"assistant","content":[{"text":"Paris is 18°C; Oslo is unknown."}]}},"stopReason":"end_turn","usage":{"inputTokens":610,"outputTokens":12,"totalTokens":622}}`

// TestEndpointIsServerAddress: every provider's Capabilities.Endpoint is
// the base URL it sends to, so that the agent's chat spans name the server
// (server.address and server.port); a provider with no BaseURL names its
// public API.
func TestEndpointIsServerAddress(t *testing.T) {
	cases := []struct {
		name  string
		model func(*testing.T, *providertest.Server) llm.Model
		final string
		def   func(*testing.T) llm.Model // built with no BaseURL
		host  string                     // the default's host
	}{
		{"openai", newOpenAI, providertest.OpenAIFinal, func(t *testing.T) llm.Model {
			m, err := openai.New(provider.Config{APIKey: providertest.OpenAIKey})
			must(t, err)
			return m
		}, "api.openai.com"},
		{"anthropic", newAnthropic, providertest.AnthropicFinal, func(t *testing.T) llm.Model {
			m, err := anthropic.New(provider.Config{APIKey: providertest.AnthropicKey})
			must(t, err)
			return m
		}, "api.anthropic.com"},
		{"gemini", newGemini, providertest.GeminiFinal, func(t *testing.T) llm.Model {
			m, err := gemini.New(provider.Config{APIKey: providertest.GeminiKey})
			must(t, err)
			return m
		}, "generativelanguage.googleapis.com"},
		{"ollama", newOllama, providertest.OllamaFinal, func(t *testing.T) llm.Model {
			m, err := ollama.New(provider.Config{})
			must(t, err)
			return m
		}, "localhost"},
		{"bedrock", newBedrock, bedrockFinal, func(t *testing.T) llm.Model {
			m, err := bedrock.NewFromConfig(aws.Config{Region: "eu-west-3", Credentials: credentials.NewStaticCredentialsProvider("AKIDTESTEXAMPLE00001", "secret", "")},
				provider.Config{})
			must(t, err)
			return m
		}, "bedrock-runtime.eu-west-3.amazonaws.com"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := providertest.NewServer(t, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(tc.final)})
			m := tc.model(t, p)
			if _, err := m.Generate(t.Context(), providertest.UserReq("hi")); err != nil {
				t.Fatal(err)
			}
			want, _ := url.Parse(p.URL)
			got, err := url.Parse(llm.CapabilitiesOf(m).Endpoint)
			if err != nil || got.Host != want.Host {
				t.Errorf("Endpoint = %q, want the server's %s", llm.CapabilitiesOf(m).Endpoint, want.Host)
			}
			d, err := url.Parse(llm.CapabilitiesOf(tc.def(t)).Endpoint)
			if err != nil || d.Hostname() != tc.host {
				t.Errorf("default Endpoint = %q, want host %s", llm.CapabilitiesOf(tc.def(t)).Endpoint, tc.host)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestContextLengthIsBudget: each provider's refusal of a prompt longer than
// the context window, in its own wire format, is the same failure:
// failure.Budget (as the agent's own check), not retryable, saying so.
func TestContextLengthIsBudget(t *testing.T) {
	js := func(body string) providertest.Reply {
		return providertest.Reply{Status: 400, ContentType: "application/json", Body: []byte(body)}
	}
	bed := js(`{"message":"Input is too long for requested model."}`)
	bed.Header = http.Header{"X-Amzn-Errortype": {"ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"}}
	cases := []struct {
		name  string
		model func(*testing.T, *providertest.Server) llm.Model
		reply providertest.Reply
	}{
		{"openai", newOpenAI, js(`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130001 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`)},
		{"anthropic", newAnthropic, js(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}`)},
		{"gemini", newGemini, js(`{"error":{"code":400,"message":"The input token count (1200345) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`)},
		{"ollama", newOllama, js(`{"error":"the input length exceeds the context length"}`)},
		{"bedrock", newBedrock, bed},
	}
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				p := providertest.NewServer(t, tc.reply)
				m := tc.model(t, p)
				req := providertest.UserReq("hi")
				if stream {
					req.OnText = func(string) {}
				}
				_, err := m.Generate(t.Context(), req)
				var fe *failure.Error
				if !errors.As(err, &fe) || fe.Kind != failure.Budget || fe.Retryable || fe.Source != failure.SourceModel ||
					!strings.Contains(fe.Message, "does not fit the model's context window") {
					t.Fatalf("err = %#v, want a Budget failure of the model saying the prompt does not fit", err)
				}
				if fe.Name != m.Name() {
					t.Errorf("Name = %q, want %q", fe.Name, m.Name())
				}
			})
		}
	}
}

// TestTypedAnswerRepair runs an agent asked for a typed answer over every
// provider: the model's first answer does not match the schema, the agent
// tells it what was wrong (a repair turn, through the failure policy), and
// the second, valid answer is the run's Data.
func TestTypedAnswerRepair(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`)
	answers := map[string]func(v string) string{
		"openai": func(v string) string { // streamed: the agent streams
			return `data: {"id":"chatcmpl-J","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":` +
				strconv.Quote(v) + `}}]}` + "\n\n" +
				`data: {"id":"chatcmpl-J","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":4}}` +
				"\n\ndata: [DONE]\n\n"
		},
		"anthropic": func(v string) string {
			return `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":` +
				strconv.Quote(v) + `}],"stop_reason":"end_turn","usage":{"input_tokens":20,"output_tokens":4}}`
		},
		"gemini": func(v string) string {
			return `{"candidates":[{"content":{"role":"model","parts":[{"text":` + strconv.Quote(v) +
				`}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":4}}`
		},
		"ollama": func(v string) string {
			return `{"model":"llama3.2","message":{"role":"assistant","content":` + strconv.Quote(v) +
				`},"done":true,"done_reason":"stop","prompt_eval_count":20,"eval_count":4}`
		},
		"bedrock": func(v string) string { // ConverseStream's event-stream frames
			return converseStream(t,
				"messageStart", `{"role":"assistant"}`,
				"contentBlockStart", `{"contentBlockIndex":0,"start":{"toolUse":{"name":"answer","toolUseId":"tooluse_1"}}}`,
				"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"toolUse":{"input":`+strconv.Quote(v)+`}}}`,
				"contentBlockStop", `{"contentBlockIndex":0}`,
				"messageStop", `{"stopReason":"tool_use"}`,
				"metadata", `{"usage":{"inputTokens":20,"outputTokens":4,"totalTokens":24},"metrics":{"latencyMs":5}}`)
		},
	}
	models := map[string]func(*testing.T, *providertest.Server) llm.Model{"openai": newOpenAI, "anthropic": newAnthropic,
		"gemini": newGemini, "ollama": newOllama, "bedrock": newBedrock}
	for _, name := range []string{"openai", "anthropic", "gemini", "ollama", "bedrock"} {
		t.Run(name, func(t *testing.T) {
			js := func(b string) providertest.Reply {
				switch name {
				case "openai":
					return providertest.Reply{Status: 200, ContentType: "text/event-stream", Body: []byte(b)}
				case "bedrock":
					return providertest.Reply{Status: 200, ContentType: "application/vnd.amazon.eventstream", Body: []byte(b)}
				}
				return providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(b)}
			}
			p := providertest.NewServer(t, js(answers[name](`{"ok":"yes"}`)), js(answers[name](`{"ok":true}`)))
			a, err := agent.New(t.Context(), agent.Config{Model: models[name](t, p), Output: &llm.Output{Name: "answer", Schema: schema}})
			if err != nil {
				t.Fatal(err)
			}
			ans, err := a.Run(t.Context(), "ok?")
			if err != nil {
				t.Fatal(err)
			}
			providertest.JSONEqual(t, "answer", ans.Data, `{"ok":true}`)
			reqs := p.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want the answer and one repair", len(reqs))
			}
			if raw := string(reqs[1].Raw); !strings.Contains(raw, "/ok") {
				t.Errorf("the repair request does not say what was wrong (at /ok): %s", raw)
			}
		})
	}
}

// converseStream encodes Bedrock ConverseStream events, given as pairs of
// event type and JSON payload, as event-stream frames.
func converseStream(t *testing.T, events ...string) string {
	var buf bytes.Buffer
	enc := eventstream.NewEncoder()
	for i := 0; i+1 < len(events); i += 2 {
		var msg eventstream.Message
		msg.Headers.Set(eventstream.EventTypeHeader, eventstream.StringValue(events[i]))
		msg.Headers.Set(eventstream.MessageTypeHeader, eventstream.StringValue(eventstream.EventMessageType))
		msg.Headers.Set(eventstream.ContentTypeHeader, eventstream.StringValue("application/json"))
		msg.Payload = []byte(events[i+1])
		if err := enc.Encode(&buf, msg); err != nil {
			t.Fatal(err)
		}
	}
	return buf.String()
}

// TestImagesReachEveryModel: through every provider, an image the user
// sent with the prompt and an image a tool returned both reach the model as
// images (their bytes in the request, no description in their place).
func TestImagesReachEveryModel(t *testing.T) {
	photo := []byte("\x89PNG\r\n\x1a\nuser-photo")
	radar := []byte("\x89PNG\r\n\x1a\nradar-image")
	cases := []struct {
		name  string
		final string
		model func(*testing.T, *providertest.Server) llm.Model
	}{
		{"openai", providertest.OpenAIFinal, newOpenAI},
		{"anthropic", providertest.AnthropicFinal, newAnthropic},
		{"gemini", providertest.GeminiFinal, newGemini},
		{"ollama", providertest.OllamaFinal, func(t *testing.T, p *providertest.Server) llm.Model {
			m, err := ollama.New(provider.Config{BaseURL: p.URL, Model: "llava", HTTPClient: p.Client()})
			must(t, err)
			return m
		}},
		{"bedrock", bedrockFinal, newBedrock},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := providertest.NewServer(t, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(tc.final)})
			m := tc.model(t, p)
			if !llm.CapabilitiesOf(m).Accept(llm.PartImage) {
				t.Fatalf("%s does not accept images", m.Name())
			}
			_, err := m.Generate(t.Context(), &llm.Request{Tools: providertest.WeatherTools(), Messages: []llm.Message{
				{Role: llm.RoleUser, Text: "Is this Paris? And its radar?", Parts: []llm.Part{llm.ImagePart("image/png", photo)}},
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)}}},
				{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "call_1", Name: "get_weather", Content: "rain; radar attached",
					Parts: []llm.Part{llm.ImagePart("image/png", radar)}}}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			raw := string(p.Requests()[0].Raw)
			for what, img := range map[string][]byte{"the user's image": photo, "the tool's image": radar} {
				if !strings.Contains(raw, base64.StdEncoding.EncodeToString(img)) {
					t.Errorf("%s did not reach the model as an image: %s", what, raw)
				}
			}
			if strings.Contains(raw, "[image image/png") {
				t.Errorf("an image was described instead of sent: %s", raw)
			}
		})
	}
}
