package gemini

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

func newTestGemini(t *testing.T, p *providertest.Server, model string) *geminiModel {
	t.Helper()
	m, err := newGemini(provider.Config{APIKey: providertest.GeminiKey, BaseURL: p.URL, Model: model, HTTPClient: p.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func jsonReply(body []byte) providertest.Reply {
	return providertest.Reply{Status: 200, ContentType: "application/json", Body: body}
}

func sseReply(body []byte) providertest.Reply {
	return providertest.Reply{Status: 200, ContentType: "text/event-stream", Body: body}
}

// compact re-encodes JSON (decoded or raw) with sorted keys, for
// comparisons.
func compact(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var d any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(d)
	return string(b)
}

func TestToolCallsRoundTrip(t *testing.T) {
	tests := []struct {
		name      string
		model     string
		stream    bool
		first     providertest.Reply
		wantText  string
		wantIDs   []string // "" : a synthesized id
		wantOslo  string
		wantUsage llm.Usage
		wantModel string
		sigPart   int // the part of the answer that carries the signature
	}{
		{"json", "gemini-2.5-flash", false, jsonReply(providertest.Fixture(t, "gemini_tools.json")),
			"Let me check both cities.", []string{"", ""}, `{"city":"Oslo","unit":"celsius"}`,
			llm.Usage{InputTokens: 118, OutputTokens: 94, CacheReadTokens: 64, ReasoningTokens: 63}, "gemini-2.5-flash", 1},
		{"sse", "gemini-3-flash-preview", true, sseReply(providertest.Fixture(t, "gemini_stream_tools.sse")),
			"Checking both.", []string{"fc_7k2p9q", "fc_3m8x1v"}, `{"city":"Oslo"}`,
			llm.Usage{InputTokens: 104, OutputTokens: 146, ReasoningTokens: 102}, "gemini-3-flash-preview", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.NewServer(t, tt.first, jsonReply([]byte(providertest.GeminiFinal)))
			m := newTestGemini(t, p, tt.model)
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
			if tt.stream && (strings.Join(deltas, "") != tt.wantText || len(deltas) != 2) {
				t.Errorf("OnText got %q, want %q in 2 deltas", deltas, tt.wantText)
			}
			if resp.Message.Text != tt.wantText || resp.Message.Reasoning != "" {
				t.Errorf("text, reasoning = %q, %q; want %q", resp.Message.Text, resp.Message.Reasoning, tt.wantText)
			}
			calls := resp.Message.ToolCalls
			if len(calls) != 2 || calls[0].Name != "get_weather" || calls[1].Name != "get_weather" {
				t.Fatalf("tool calls = %+v", calls)
			}
			for i, want := range tt.wantIDs {
				if want == "" && (!synthesized(calls[i].ID) || calls[i].ID == calls[1-i].ID) {
					t.Errorf("call %d id %q: want a distinct synthesized id", i, calls[i].ID)
				}
				if want != "" && calls[i].ID != want {
					t.Errorf("call %d id = %q, want %q", i, calls[i].ID, want)
				}
			}
			providertest.JSONEqual(t, "args[0]", calls[0].Args, `{"city":"Paris"}`)
			providertest.JSONEqual(t, "args[1]", calls[1].Args, tt.wantOslo)
			if resp.Usage != tt.wantUsage {
				t.Errorf("usage = %+v, want %+v", resp.Usage, tt.wantUsage)
			}
			if resp.StopReason != "STOP" || resp.Model != tt.wantModel || resp.ID == "" {
				t.Errorf("stop, model, id = %q, %q, %q", resp.StopReason, resp.Model, resp.ID)
			}
			if storedParts(resp.Message.Provider) == nil {
				t.Fatalf("the signed parts are not kept: %s", resp.Message.Provider)
			}
			// A message whose arguments changed since keeps its calls' signatures.
			changed := resp.Message
			changed.ToolCalls = append([]llm.ToolCall(nil), changed.ToolCalls...)
			changed.ToolCalls[0].Args = json.RawMessage(`{"city":"Paris, FR"}`)
			rebuilt := compact(t, modelParts(changed))
			if !strings.Contains(rebuilt, `"thoughtSignature"`) || !strings.Contains(rebuilt, "Paris, FR") {
				t.Errorf("changed message sent as %s", rebuilt)
			}

			req2 := &llm.Request{System: req.System, Tools: req.Tools, Messages: []llm.Message{
				req.Messages[0], resp.Message,
				{Role: llm.RoleTool, ToolResults: []llm.ToolResult{
					// in the other order than the calls: sent in the calls' order
					{CallID: calls[1].ID, Name: "get_weather", Content: "Error: station offline", IsError: true},
					{CallID: calls[0].ID, Content: "18°C"}}},
			}}
			final, err := m.Generate(t.Context(), req2)
			if err != nil {
				t.Fatal(err)
			}
			if final.Message.Text != "Paris is 18°C; Oslo is unknown." || final.StopReason != "STOP" {
				t.Errorf("final = %+v", final)
			}
			reqs := p.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			for i, r := range reqs {
				verb, query := "generateContent", ""
				if i == 0 && tt.stream {
					verb, query = "streamGenerateContent", "alt=sse"
				}
				if r.Path != "/v1beta/models/"+tt.model+":"+verb || r.Query != query {
					t.Errorf("request %d: path %q?%q", i, r.Path, r.Query)
				}
				if r.Header.Get("x-goog-api-key") != providertest.GeminiKey || r.Header.Get("Authorization") != "" {
					t.Errorf("headers = %v", r.Header)
				}
				if providertest.Path(r.Body, "systemInstruction", "parts", 0, "text") != "You are terse." {
					t.Errorf("systemInstruction: %s", r.Raw)
				}
				decl := providertest.Path(r.Body, "tools", 0, "functionDeclarations", 0)
				if providertest.Path(decl, "name") != "get_weather" || providertest.Path(decl, "parametersJsonSchema", "required", 0) != "city" ||
					providertest.Path(decl, "parameters") != nil {
					t.Errorf("function declaration = %v", decl)
				}
				if providertest.Path(r.Body, "generationConfig") != nil {
					t.Errorf("generationConfig sent for a request that sets none: %s", r.Raw)
				}
			}
			contents, _ := providertest.Path(reqs[1].Body, "contents").([]any)
			if len(contents) != 3 {
				t.Fatalf("second request has %d contents, want 3 (user, model, user with responses): %s", len(contents), reqs[1].Raw)
			}
			// The model's turn goes back as it came, signature and all.
			sent := compact(t, providertest.Path(contents[1], "parts"))
			if providertest.Path(contents[1], "role") != "model" || sent != compact(t, storedParts(resp.Message.Provider)) {
				t.Errorf("model turn = %s, want the answer's parts %s", sent, resp.Message.Provider)
			}
			if providertest.Path(contents[1], "parts", tt.sigPart, "thoughtSignature") == nil {
				t.Errorf("the thought signature was not sent back: %s", sent)
			}
			res := contents[2]
			first, second := providertest.Path(res, "parts", 0, "functionResponse"), providertest.Path(res, "parts", 1, "functionResponse")
			if providertest.Path(res, "role") != "user" || providertest.Path(res, "parts", 2) != nil ||
				providertest.Path(first, "name") != "get_weather" || providertest.Path(first, "response", "output") != "18°C" ||
				providertest.Path(second, "name") != "get_weather" || providertest.Path(second, "response", "error") != "Error: station offline" {
				t.Errorf("function responses = %s", compact(t, res))
			}
			wantFirstID, wantSecondID := any(nil), any(nil)
			if tt.wantIDs[0] != "" {
				wantFirstID, wantSecondID = tt.wantIDs[0], tt.wantIDs[1]
			}
			if providertest.Path(first, "id") != wantFirstID || providertest.Path(second, "id") != wantSecondID {
				t.Errorf("response ids = %v, %v; want %v, %v (synthesized ids are not sent)", providertest.Path(first, "id"),
					providertest.Path(second, "id"), wantFirstID, wantSecondID)
			}
		})
	}
}

// TestSynthesizedIDsDiffer: calls without ids in two turns of one
// conversation get different ids (the agent keys a run's calls by id), and
// the same answer to the same conversation the same ones.
func TestSynthesizedIDsDiffer(t *testing.T) {
	body := providertest.Fixture(t, "gemini_tools.json")
	p := providertest.NewServer(t, jsonReply(body))
	m := newTestGemini(t, p, "gemini-2.5-flash")
	short := providertest.UserReq("Weather?")
	long := &llm.Request{Messages: append([]llm.Message{{Role: llm.RoleUser, Text: "Hi"}, {Role: llm.RoleAssistant, Text: "Hello"}}, short.Messages...)}
	ids := func(req *llm.Request) []string {
		resp, err := m.Generate(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		return []string{resp.Message.ToolCalls[0].ID, resp.Message.ToolCalls[1].ID}
	}
	a, again, b := ids(short), ids(short), ids(long)
	if !reflect.DeepEqual(a, again) {
		t.Errorf("the same answer got ids %q then %q", a, again)
	}
	if a[0] == b[0] || a[1] == b[1] {
		t.Errorf("two turns share ids: %q, %q", a, b)
	}
}

func TestContents(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	img := llm.ImagePart("image/png", png)
	b64 := base64.StdEncoding.EncodeToString(png)
	call := []llm.ToolCall{{ID: "gemini-call-0-abc", Name: "snapshot", Args: []byte(`{}`)}}
	results := []llm.ToolResult{{CallID: "gemini-call-0-abc", Name: "snapshot", Content: "a chart", Parts: []llm.Part{img}}}
	tests := []struct {
		name  string
		model string
		in    []llm.Message
		want  string
	}{
		{"consecutive users merge", "gemini-2.5-flash", []llm.Message{{Role: llm.RoleUser, Text: "a"}, {Role: llm.RoleUser, Text: "b"}},
			`[{"role":"user","parts":[{"text":"a"},{"text":"b"}]}]`},
		{"image and document in a user turn", "gemini-2.5-flash", []llm.Message{{Role: llm.RoleUser, Text: "Compare.", Parts: []llm.Part{
			img, {Kind: llm.PartDocument, MediaType: "application/pdf", URL: "https://example.com/report.pdf"}, llm.TextPart("Be brief.")}}},
			`[{"role":"user","parts":[{"text":"Compare."},{"inlineData":{"mimeType":"image/png","data":"` + b64 + `"}},
			  {"fileData":{"mimeType":"application/pdf","fileUri":"https://example.com/report.pdf"}},{"text":"Be brief."}]}]`},
		{"an image result after the responses before Gemini 3", "gemini-2.5-flash",
			[]llm.Message{{Role: llm.RoleAssistant, ToolCalls: call}, {Role: llm.RoleTool, ToolResults: results}, {Role: llm.RoleUser, Text: "go on"}},
			`[{"role":"model","parts":[{"functionCall":{"name":"snapshot","args":{}}}]},
			  {"role":"user","parts":[{"functionResponse":{"name":"snapshot","response":{"output":"a chart"}}},
			    {"text":"The result of snapshot (call gemini-call-0-abc) includes:"},{"inlineData":{"mimeType":"image/png","data":"` + b64 + `"}},
			    {"text":"go on"}]}]`},
		{"an image result inside the response from Gemini 3", "gemini-3-pro-preview",
			[]llm.Message{{Role: llm.RoleAssistant, ToolCalls: call}, {Role: llm.RoleTool, ToolResults: results}},
			`[{"role":"model","parts":[{"functionCall":{"name":"snapshot","args":{}}}]},
			  {"role":"user","parts":[{"functionResponse":{"name":"snapshot","response":{"output":"a chart"},
			    "parts":[{"inlineData":{"mimeType":"image/png","data":"` + b64 + `"}}]}}]}]`},
		{"malformed args go back as an empty object; ids Gemini gave are kept", "gemini-2.5-flash", []llm.Message{{Role: llm.RoleAssistant, Text: "t",
			ToolCalls: []llm.ToolCall{{ID: "fc_1", Name: "x", Args: []byte(`{"a":`)}}}},
			`[{"role":"model","parts":[{"text":"t"},{"functionCall":{"id":"fc_1","name":"x","args":{}}}]}]`},
		{"empty messages are dropped; another provider's blocks are ignored", "gemini-2.5-flash", []llm.Message{{Role: llm.RoleUser},
			{Role: llm.RoleAssistant, Text: "hi", Provider: json.RawMessage(`[{"type":"server_tool_use","id":"s1"}]`)}},
			`[{"role":"model","parts":[{"text":"hi"}]}]`},
		{"a media part with no content, or at a URL Gemini cannot fetch, is described", "gemini-2.5-flash", []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
			{Kind: llm.PartAudio, MediaType: "audio/wav"}, {Kind: llm.PartDocument, MediaType: "application/pdf", URL: "file:///tmp/a.pdf"}}}},
			`[{"role":"user","parts":[{"text":"[audio audio/wav]"},{"text":"[document application/pdf at file:///tmp/a.pdf]"}]}]`},
		{"media types are normalized, or sniffed when missing; gs: URLs are fetched", "gemini-2.5-flash", []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
			{Kind: llm.PartDocument, MediaType: "Text/Plain; charset=utf-8", Data: []byte("hi")}, {Kind: llm.PartImage, Data: png},
			{Kind: llm.PartAudio, MediaType: "audio/mpeg", URL: "gs://bucket/a.mp3"}}}},
			`[{"role":"user","parts":[{"inlineData":{"mimeType":"text/plain","data":"aGk="}},{"inlineData":{"mimeType":"image/png","data":"` + b64 + `"}},
			  {"fileData":{"mimeType":"audio/mpeg","fileUri":"gs://bucket/a.mp3"}}]}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(contents(tt.in, generationOf(tt.model)))
			if err != nil {
				t.Fatal(err)
			}
			providertest.JSONEqual(t, "contents", b, tt.want)
		})
	}
}

// TestImageRoundTrip sends an image with the prompt, then an image a tool
// returned, to a local server, and checks both reach it as inlineData.
func TestImageRoundTrip(t *testing.T) {
	p := providertest.NewServer(t, jsonReply(providertest.Fixture(t, "gemini_tools.json")), jsonReply([]byte(providertest.GeminiFinal)))
	m := newTestGemini(t, p, "gemini-2.5-flash")
	photo := llm.ImagePart("image/jpeg", []byte("jpeg-bytes"))
	req := &llm.Request{Tools: providertest.WeatherTools(), Messages: []llm.Message{{Role: llm.RoleUser, Text: "Where is this?", Parts: []llm.Part{photo}}}}
	resp, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	radar := llm.ImagePart("image/png", []byte("radar-bytes"))
	req.Messages = append(req.Messages, resp.Message, llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{
		{CallID: resp.Message.ToolCalls[0].ID, Name: "get_weather", Content: "radar attached", Parts: []llm.Part{radar}},
		{CallID: resp.Message.ToolCalls[1].ID, Name: "get_weather", Content: "9°C"}}})
	if _, err := m.Generate(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if got := providertest.Path(reqs[0].Body, "contents", 0, "parts", 1, "inlineData"); compact(t, got) !=
		`{"data":"`+base64.StdEncoding.EncodeToString(photo.Data)+`","mimeType":"image/jpeg"}` {
		t.Errorf("prompt image = %v", got)
	}
	results := providertest.Path(reqs[1].Body, "contents", 2, "parts")
	if providertest.Path(results, 0, "functionResponse", "response", "output") != "radar attached" ||
		providertest.Path(results, 1, "functionResponse", "response", "output") != "9°C" ||
		providertest.Path(results, 3, "inlineData", "data") != base64.StdEncoding.EncodeToString(radar.Data) {
		t.Errorf("tool result image not sent: %s", compact(t, results))
	}
}

func TestStructuredOutput(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"recipeName":{"type":"string"},"ingredients":{"type":"array","items":{"type":"string"}}},"required":["recipeName"]}`)
	tests := []struct {
		name     string
		model    string
		tools    bool
		jsonMode bool
	}{
		{"no tools", "gemini-2.5-flash", false, true},
		{"tools before Gemini 3: asked in the system instruction", "gemini-2.5-flash", true, false},
		{"tools on Gemini 3", "gemini-3-flash-preview", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.NewServer(t, jsonReply(providertest.Fixture(t, "gemini_structured.json")))
			m := newTestGemini(t, p, tt.model)
			req := &llm.Request{System: "Be exact.", Output: &llm.Output{Name: "recipe", Schema: schema},
				Messages: []llm.Message{{Role: llm.RoleUser, Text: "One cookie recipe."}}}
			if tt.tools {
				req.Tools = providertest.WeatherTools()
			}
			resp, err := m.Generate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			var answer struct {
				RecipeName string `json:"recipeName"`
			}
			if err := json.Unmarshal([]byte(resp.Message.Text), &answer); err != nil || answer.RecipeName != "Chocolate Chip Cookies" {
				t.Errorf("answer %q: %v", resp.Message.Text, err)
			}
			body := p.Requests()[0].Body
			gc := providertest.Path(body, "generationConfig")
			system, _ := providertest.Path(body, "systemInstruction", "parts", 0, "text").(string)
			if tt.jsonMode {
				if providertest.Path(gc, "responseMimeType") != "application/json" || compact(t, providertest.Path(gc, "responseJsonSchema")) != compact(t, json.RawMessage(schema)) {
					t.Errorf("generationConfig = %v", gc)
				}
				if system != "Be exact." {
					t.Errorf("system = %q", system)
				}
				return
			}
			if gc != nil {
				t.Errorf("JSON mode sent with tools to %s: %v", tt.model, gc)
			}
			if !strings.HasPrefix(system, "Be exact.\n\n") || !strings.Contains(system, `"required":["recipeName"]`) {
				t.Errorf("system = %q, want the schema asked for", system)
			}
		})
	}
}

func TestGenerationConfig(t *testing.T) {
	temp := 0.2
	tests := []struct {
		name  string
		model string
		req   llm.Request
		max   int // Config.MaxTokens
		want  string
	}{
		{"caps, temperature and stops", "gemini-2.5-flash", llm.Request{MaxTokens: 300, Temperature: &temp, StopSequences: []string{"END"}}, 0,
			`{"maxOutputTokens":300,"temperature":0.2,"stopSequences":["END"]}`},
		{"the config's cap when the request sets none", "gemini-2.5-flash", llm.Request{}, 900, `{"maxOutputTokens":900}`},
		{"effort on 2.5: a budget", "gemini-2.5-pro", llm.Request{Reasoning: &llm.Reasoning{Effort: llm.EffortLow}}, 0,
			`{"thinkingConfig":{"thinkingBudget":1024,"includeThoughts":true}}`},
		{"minimal on 2.5 fits Flash-Lite's range", "gemini-2.5-flash-lite", llm.Request{Reasoning: &llm.Reasoning{Effort: llm.EffortMinimal}}, 0,
			`{"thinkingConfig":{"thinkingBudget":512,"includeThoughts":true}}`},
		{"a budget on 2.5", "gemini-2.5-flash", llm.Request{Reasoning: &llm.Reasoning{BudgetTokens: 2000, Effort: llm.EffortHigh}}, 0,
			`{"thinkingConfig":{"thinkingBudget":2000,"includeThoughts":true}}`},
		{"neither on 2.5: dynamic", "gemini-2.5-flash", llm.Request{Reasoning: &llm.Reasoning{}}, 0,
			`{"thinkingConfig":{"thinkingBudget":-1,"includeThoughts":true}}`},
		{"effort on 3: a level, never with a budget", "gemini-3-pro-preview", llm.Request{Reasoning: &llm.Reasoning{Effort: llm.EffortHigh, BudgetTokens: 4000}}, 0,
			`{"thinkingConfig":{"thinkingLevel":"high","includeThoughts":true}}`},
		{"minimal on 3 is low", "gemini-3.7-flash", llm.Request{Reasoning: &llm.Reasoning{Effort: llm.EffortMinimal}}, 0,
			`{"thinkingConfig":{"thinkingLevel":"low","includeThoughts":true}}`},
		{"a budget alone on 3", "gemini-3-flash-preview", llm.Request{Reasoning: &llm.Reasoning{BudgetTokens: 4000}}, 0,
			`{"thinkingConfig":{"thinkingBudget":4000,"includeThoughts":true}}`},
		{"reasoning on a model that does not think is not sent", "gemini-2.0-flash", llm.Request{Reasoning: &llm.Reasoning{Effort: llm.EffortHigh}}, 0, `null`},
		{"an alias thinks, by budget", "gemini-flash-latest", llm.Request{Reasoning: &llm.Reasoning{Effort: llm.EffortMedium}}, 0,
			`{"thinkingConfig":{"thinkingBudget":8192,"includeThoughts":true}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := newGemini(provider.Config{APIKey: "k-0123456789", Model: tt.model, MaxTokens: tt.max})
			if err != nil {
				t.Fatal(err)
			}
			tt.req.Messages = []llm.Message{{Role: llm.RoleUser, Text: "hi"}}
			b, err := json.Marshal(m.toGemini(&tt.req).GenerationConfig)
			if err != nil {
				t.Fatal(err)
			}
			providertest.JSONEqual(t, "generationConfig", b, tt.want)
		})
	}
}

func TestThinkingRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		reply  providertest.Reply
		sigAt  int // the index of the signed part sent back
	}{
		{"json", false, jsonReply(providertest.Fixture(t, "gemini_thinking.json")), 1},
		{"sse", true, sseReply(providertest.Fixture(t, "gemini_stream_thinking.sse")), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.NewServer(t, tt.reply, jsonReply([]byte(providertest.GeminiFinal)))
			m := newTestGemini(t, p, "gemini-2.5-pro")
			var streamed strings.Builder
			req := &llm.Request{Reasoning: &llm.Reasoning{Effort: llm.EffortHigh}, Messages: []llm.Message{{Role: llm.RoleUser, Text: "Warmer, Paris or Oslo?"}}}
			if tt.stream {
				req.OnText = func(d string) { streamed.WriteString(d) }
			}
			resp, err := m.Generate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			const answer = "Paris is warmer: 18°C against Oslo's 9°C."
			if resp.Message.Text != answer || (tt.stream && streamed.String() != answer) {
				t.Errorf("text %q, streamed %q; want the answer without thoughts", resp.Message.Text, streamed.String())
			}
			if !strings.HasPrefix(resp.Message.Reasoning, "**Weighing the units**") || strings.Contains(resp.Message.Text, "Weighing") {
				t.Errorf("reasoning = %q", resp.Message.Reasoning)
			}
			if resp.Usage != (llm.Usage{InputTokens: 27, OutputTokens: 325, ReasoningTokens: 311}) {
				t.Errorf("usage = %+v", resp.Usage)
			}
			if got := providertest.Path(p.Requests()[0].Body, "generationConfig", "thinkingConfig"); compact(t, got) != `{"includeThoughts":true,"thinkingBudget":24576}` {
				t.Errorf("thinkingConfig = %v", got)
			}
			// Sent back unchanged: the thought and the signature in its part.
			follow := &llm.Request{Messages: []llm.Message{req.Messages[0], resp.Message, {Role: llm.RoleUser, Text: "And Rome?"}}}
			if _, err := m.Generate(t.Context(), follow); err != nil {
				t.Fatal(err)
			}
			model := providertest.Path(p.Requests()[1].Body, "contents", 1)
			if providertest.Path(model, "parts", 0, "thought") != true || providertest.Path(model, "parts", tt.sigAt, "thoughtSignature") == nil {
				t.Errorf("model turn sent back = %s", compact(t, model))
			}
			// A message changed since is rebuilt from its fields.
			changed := resp.Message
			changed.Text = "Paris."
			parts := modelParts(changed)
			if len(parts) != 1 || string(parts[0]) != `{"text":"Paris."}` {
				t.Errorf("changed message sent as %s", parts)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	echoKey := `{"error":{"code":400,"message":"API key not valid: ` + providertest.GeminiKey + `. Please pass a valid API key.","status":"INVALID_ARGUMENT",
"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}`
	tooLong := `{"error":{"code":400,"message":"The input token count (1200345) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`
	tests := []struct {
		name      string
		stream    bool
		rep       providertest.Reply
		kind      failure.Kind
		retryable bool
		says      string
	}{
		{"400 context too long", false, providertest.Reply{Status: 400, ContentType: "application/json", Body: []byte(tooLong)}, failure.Budget, false, "the prompt does not fit the model's context window (the provider said: The input token count"},
		{"400 invalid key echoing the key", false, providertest.Reply{Status: 400, ContentType: "application/json", Body: []byte(echoKey)}, failure.PermissionDenied, false, "API key not valid"},
		{"403", true, providertest.Reply{Status: 403, ContentType: "application/json", Body: []byte(`{"error":{"code":403,"message":"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.","status":"PERMISSION_DENIED"}}`)}, failure.PermissionDenied, false, "PERMISSION_DENIED"},
		{"429", false, providertest.Reply{Status: 429, ContentType: "application/json", Body: []byte(`{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED"}}`)}, failure.Transient, true, "RESOURCE_EXHAUSTED"},
		{"500", false, providertest.Reply{Status: 500, ContentType: "application/json", Body: []byte(`{"error":{"code":500,"message":"An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting","status":"INTERNAL"}}`)}, failure.Transient, true, "INTERNAL"},
		{"503", true, providertest.Reply{Status: 503, ContentType: "application/json", Body: []byte(`{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`)}, failure.Transient, true, "overloaded"},
		{"error event in the stream", true, sseReply([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hel\"}],\"role\":\"model\"}}]}\r\n\r\ndata: {\"error\":{\"code\":503,\"message\":\"The model is overloaded.\",\"status\":\"UNAVAILABLE\"}}\r\n\r\n")), failure.Transient, true, "while streaming"},
		{"stream cut before a finishReason", true, sseReply([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hel\"}],\"role\":\"model\"}}]}\r\n\r\n")), failure.Transient, true, "ended before"},
		{"body not JSON", false, jsonReply([]byte(`<html>gateway</html>`)), failure.Protocol, false, "not valid JSON"},
		{"no candidate", false, jsonReply([]byte(`{"usageMetadata":{"promptTokenCount":3}}`)), failure.Protocol, false, "no candidate"},
		{"blocked prompt", false, jsonReply(providertest.Fixture(t, "gemini_blocked.json")), failure.Model, false, "blocked the prompt (SAFETY)"},
		{"blocked prompt while streaming", true, sseReply([]byte("data: " + strings.Join(strings.Fields(string(providertest.Fixture(t, "gemini_blocked.json"))), " ") + "\r\n\r\n")), failure.Model, false, "blocked the prompt (SAFETY)"},
		{"answer withheld for safety", false, jsonReply(providertest.Fixture(t, "gemini_safety.json")), failure.Model, false, "finishReason SAFETY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.NewServer(t, tt.rep)
			m := newTestGemini(t, p, "gemini-2.5-flash")
			req := providertest.UserReq("hi")
			if tt.stream {
				req.OnText = func(string) {}
			}
			_, err := m.Generate(t.Context(), req)
			providertest.CheckFailure(t, err, tt.kind, tt.retryable, "gemini/gemini-2.5-flash", providertest.GeminiKey)
			if err != nil && !strings.Contains(err.Error(), tt.says) {
				t.Errorf("error %q does not say %q", err, tt.says)
			}
		})
	}
}

func TestCapabilities(t *testing.T) {
	tests := []struct {
		model     string
		reasoning bool
		window    int
	}{
		{"gemini-2.5-flash", true, 1 << 20}, {"gemini-3-pro-preview", true, 1 << 20}, {"gemini-flash-latest", true, 1 << 20},
		{"gemini-2.0-flash", false, 1 << 20}, {"gemini-1.5-pro", false, 1 << 20}, {"gemma-3-27b-it", false, 0},
	}
	for _, tt := range tests {
		m, err := New(provider.Config{APIKey: "k-0123456789", Model: tt.model})
		if err != nil {
			t.Fatal(err)
		}
		c := llm.CapabilitiesOf(m)
		if c.Reasoning != tt.reasoning || c.ContextWindow != tt.window || !c.StructuredOutput || !c.PromptCache || c.ToolSearch ||
			!c.Accept(llm.PartImage) || !c.Accept(llm.PartAudio) || !c.Accept(llm.PartDocument) || c.MaxPartBytes != maxPartBytes {
			t.Errorf("%s: capabilities %+v", tt.model, c)
		}
		if m.Name() != "gemini/"+tt.model {
			t.Errorf("name = %q", m.Name())
		}
	}
}

func TestProviderEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		ok   bool
		want provider.Config
	}{
		{"GEMINI_API_KEY", map[string]string{"GEMINI_API_KEY": "g-key", "GEMINI_MODEL": "gemini-3-flash-preview", "GEMINI_BASE_URL": "http://proxy"}, true,
			provider.Config{Provider: Name, APIKey: "g-key", Model: "gemini-3-flash-preview", BaseURL: "http://proxy"}},
		{"GOOGLE_API_KEY when GEMINI_API_KEY is unset", map[string]string{"GOOGLE_API_KEY": "goog"}, true, provider.Config{Provider: Name, APIKey: "goog"}},
		{"GEMINI_API_KEY first", map[string]string{"GOOGLE_API_KEY": "goog", "GEMINI_API_KEY": "gem"}, true, provider.Config{Provider: Name, APIKey: "gem"}},
		{"nothing", map[string]string{"GEMINI_MODEL": "x"}, false, provider.Config{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, ok := Provider().Env(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if ok != tt.ok || (ok && cfg != tt.want) {
				t.Errorf("Env = %+v, %v; want %+v, %v", cfg, ok, tt.want, tt.ok)
			}
		})
	}
	m, err := newGemini(provider.Config{APIKey: "k-0123456789", BaseURL: "https://example.com/v1beta/"})
	if err != nil || m.Name() != "gemini/"+defaultModel || m.base != "https://example.com/v1beta/models/"+defaultModel {
		t.Errorf("defaults: %v, %q, %q", err, m.Name(), m.base)
	}
	if _, err := New(provider.Config{}); !errorsIsConfig(err) {
		t.Errorf("no key: %v, want a Config failure", err)
	}
}

func errorsIsConfig(err error) bool {
	fe := failure.From(err)
	return fe != nil && fe.Kind == failure.Config
}
