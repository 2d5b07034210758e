package bedrock

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

func TestToolCallsRoundTrip(t *testing.T) {
	tests := []struct {
		name      string
		stream    bool
		first     reply
		wantText  string
		wantOslo  string
		wantUsage llm.Usage
	}{
		{"converse", false, jsonReply(t, "converse_tools.json"), "Let me check both cities.", `{"city":"Oslo","unit":"celsius"}`,
			llm.Usage{InputTokens: 492, OutputTokens: 91}},
		{"converse-stream", true, reply{events: eventsFixture(t, "stream_tools.events")}, "Checking both.", `{"city":"Oslo"}`,
			llm.Usage{InputTokens: 472, OutputTokens: 89}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.first, jsonReply(t, "converse_final.json"))
			m := newTestModel(t, s, claudeID)
			var deltas []string
			temp := 0.2
			req := &llm.Request{System: "You are terse.", Tools: providertest.WeatherTools(), MaxTokens: 300, Temperature: &temp,
				StopSequences: []string{"END"}, Messages: []llm.Message{{Role: llm.RoleUser, Text: "Weather in Paris and Oslo?"}}}
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
			if resp.Message.Text != tt.wantText {
				t.Errorf("text = %q, want %q", resp.Message.Text, tt.wantText)
			}
			calls := resp.Message.ToolCalls
			if len(calls) != 2 || calls[0].ID != "tooluse_paris" || calls[1].ID != "tooluse_oslo" || calls[1].Name != "get_weather" {
				t.Fatalf("tool calls = %+v", calls)
			}
			providertest.JSONEqual(t, "args[0]", calls[0].Args, `{"city":"Paris"}`)
			providertest.JSONEqual(t, "args[1]", calls[1].Args, tt.wantOslo)
			if resp.Usage != tt.wantUsage {
				t.Errorf("usage = %+v, want %+v", resp.Usage, tt.wantUsage)
			}
			if resp.StopReason != "tool_use" || resp.ID != "req-0001" {
				t.Errorf("stop reason, id = %q, %q", resp.StopReason, resp.ID)
			}

			first := s.requests()[0]
			wantPath := "/model/" + claudeID + "/converse"
			if tt.stream {
				wantPath += "-stream"
			}
			if first.path != wantPath {
				t.Errorf("path = %q, want %q", first.path, wantPath)
			}
			b := first.body
			if path(b, "system", 0, "text") != "You are terse." || path(b, "inferenceConfig", "maxTokens") != 300.0 ||
				path(b, "inferenceConfig", "stopSequences", 0) != "END" || path(b, "inferenceConfig", "temperature") == nil {
				t.Errorf("system, inferenceConfig = %v, %v", b["system"], b["inferenceConfig"])
			}
			spec := path(b, "toolConfig", "tools", 0, "toolSpec")
			if path(spec, "name") != "get_weather" || path(spec, "description") != "Current weather of a city." ||
				path(spec, "inputSchema", "json", "required", 0) != "city" {
				t.Errorf("toolSpec = %v", spec)
			}
			if path(b, "toolConfig", "toolChoice") != nil {
				t.Errorf("a toolChoice was sent without Output: %v", path(b, "toolConfig", "toolChoice"))
			}

			req2 := &llm.Request{System: req.System, Tools: req.Tools, Messages: []llm.Message{
				req.Messages[0], resp.Message,
				{Role: llm.RoleTool, ToolResults: []llm.ToolResult{
					{CallID: "tooluse_paris", Name: "get_weather", Content: "18°C"},
					{CallID: "tooluse_oslo", Name: "get_weather", Content: "Error: station offline", IsError: true}}},
			}}
			final, err := m.Generate(t.Context(), req2)
			if err != nil {
				t.Fatal(err)
			}
			if final.Message.Text != "Paris is 18°C; Oslo is unknown." || final.StopReason != "end_turn" {
				t.Errorf("final = %q (%s)", final.Message.Text, final.StopReason)
			}
			msgs := s.requests()[1].body["messages"].([]any)
			if len(msgs) != 3 {
				t.Fatalf("sent %d messages, want 3: %v", len(msgs), msgs)
			}
			asst := path(msgs, 1)
			if path(asst, "role") != "assistant" || path(asst, "content", 0, "text") != tt.wantText ||
				path(asst, "content", 1, "toolUse", "toolUseId") != "tooluse_paris" ||
				path(asst, "content", 2, "toolUse", "input", "city") != "Oslo" {
				t.Errorf("assistant message sent back = %v", asst)
			}
			results := path(msgs, 2)
			if path(results, "role") != "user" || path(results, "content", 0, "toolResult", "content", 0, "text") != "18°C" ||
				path(results, "content", 0, "toolResult", "status") != "success" ||
				path(results, "content", 1, "toolResult", "toolUseId") != "tooluse_oslo" ||
				path(results, "content", 1, "toolResult", "status") != "error" {
				t.Errorf("tool results sent = %v", results)
			}
		})
	}
}

// TestJSONToolResult: a tool result that is a JSON object goes as a json
// block, numbers exact; a blank one as a placeholder text, which the API
// requires non-blank.
func TestJSONToolResult(t *testing.T) {
	s := newServer(t, jsonReply(t, "converse_final.json"))
	m := newTestModel(t, s, "amazon.nova-pro-v1:0")
	_, err := m.Generate(t.Context(), &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Text: "go"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "stats", Args: json.RawMessage(`{"n":12345678901234567890}`)}, {ID: "b", Name: "noop"}}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{
			{CallID: "a", Name: "stats", Content: `{"count": 12345678901234567890, "ok": true}`},
			{CallID: "b", Name: "noop", Content: ""}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	raw := string(s.requests()[0].raw)
	for _, want := range []string{`"json":{"count":12345678901234567890,"ok":true}`, `"input":{"n":12345678901234567890}`, `"text":"(no output)"`, `"input":{}`} {
		if !strings.Contains(raw, want) {
			t.Errorf("request lacks %s: %s", want, raw)
		}
	}
	if strings.Contains(raw, `"status"`) {
		t.Errorf("a toolResult status was sent to Nova, which takes none: %s", raw)
	}
}

func TestStructuredOutput(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"celsius":{"type":"number"},"dry":{"type":"boolean"}},"required":["city","celsius"]}`)
	tests := []struct {
		name       string
		stream     bool
		tools      bool
		reasoning  bool
		first      reply
		wantChoice string // the toolChoice member sent, "" for none
		wantUsage  llm.Usage
	}{
		{"converse", false, false, false, jsonReply(t, "converse_answer.json"), "tool", llm.Usage{InputTokens: 301, OutputTokens: 40}},
		{"converse-stream", true, false, false, reply{events: eventsFixture(t, "stream_answer.events")}, "tool",
			llm.Usage{InputTokens: 557, OutputTokens: 40, CacheReadTokens: 256}},
		{"with tools", false, true, false, jsonReply(t, "converse_answer.json"), "any", llm.Usage{InputTokens: 301, OutputTokens: 40}},
		{"while reasoning", false, false, true, jsonReply(t, "converse_answer.json"), "", llm.Usage{InputTokens: 301, OutputTokens: 40}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.first)
			m := newTestModel(t, s, claudeID)
			req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "Forecast for Paris, as JSON."}},
				Output: &llm.Output{Name: "forecast", Schema: schema}}
			if tt.tools {
				req.Tools = providertest.WeatherTools()
			}
			if tt.reasoning {
				req.Reasoning = &llm.Reasoning{Effort: llm.EffortLow}
			}
			var streamed strings.Builder
			if tt.stream {
				req.OnText = func(d string) { streamed.WriteString(d) }
			}
			resp, err := m.Generate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			providertest.JSONEqual(t, "answer", json.RawMessage(resp.Message.Text), `{"city":"Paris","celsius":18,"dry":true}`)
			if len(resp.Message.ToolCalls) != 0 {
				t.Errorf("the answer tool was reported as a call: %+v", resp.Message.ToolCalls)
			}
			if tt.stream {
				providertest.JSONEqual(t, "streamed answer", json.RawMessage(streamed.String()), resp.Message.Text)
			}
			if resp.Usage != tt.wantUsage {
				t.Errorf("usage = %+v, want %+v", resp.Usage, tt.wantUsage)
			}
			b := s.requests()[0].body
			tools := path(b, "toolConfig", "tools").([]any)
			answer := path(tools, len(tools)-2, "toolSpec") // the cache point is last
			if path(answer, "name") != "forecast" || path(answer, "inputSchema", "json", "required", 1) != "celsius" {
				t.Errorf("answer tool = %v", answer)
			}
			choice, _ := path(b, "toolConfig", "toolChoice").(map[string]any)
			switch tt.wantChoice {
			case "":
				if choice != nil {
					t.Errorf("toolChoice = %v while thinking, want none", choice)
				}
			case "tool":
				if path(choice, "tool", "name") != "forecast" {
					t.Errorf("toolChoice = %v, want the forecast tool", choice)
				}
			default:
				if _, ok := choice[tt.wantChoice]; !ok || len(choice) != 1 {
					t.Errorf("toolChoice = %v, want %s", choice, tt.wantChoice)
				}
			}
			// The answer goes back as the assistant's text, with no
			// toolUse left unanswered.
			back, err := m.(*model).converseInput(&llm.Request{Messages: []llm.Message{req.Messages[0], resp.Message,
				{Role: llm.RoleUser, Text: "thanks"}}})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(back.messages[1].Content); n != 2 { // text and the cache point
				t.Errorf("assistant answer sent back as %d blocks", n)
			}
		})
	}
}

func TestMediaParts(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake-image")
	pdf := []byte("%PDF-1.7 fake")
	s := newServer(t, jsonReply(t, "converse_final.json"))
	m := newTestModel(t, s, claudeID)
	req := &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Text: "What is in these?", Parts: []llm.Part{
			llm.ImagePart("image/png", png),
			llm.DocumentPart("Q3 report.final.pdf", "application/pdf", pdf),
			llm.DocumentPart("Q3 report.final.pdf", "application/pdf", pdf),
			{Kind: llm.PartImage, MediaType: "image/jpeg", URL: "s3://bucket/cat.jpg"},
			{Kind: llm.PartImage, MediaType: "image/png", URL: "https://example.com/dog.png"},
			{Kind: llm.PartAudio, MediaType: "audio/wav", Data: []byte("RIFF")},
			{Kind: llm.PartImage, MediaType: "image/tiff", Data: []byte("II*")},
			{Kind: llm.PartImage, MediaType: "image/png", Data: make([]byte, maxImageBytes+1)},
		}},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "shot", Name: "screenshot", Args: json.RawMessage(`{}`)}}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "shot", Name: "screenshot", Content: "Here it is.",
			Parts: []llm.Part{llm.ImagePart("image/webp", png)}}}},
	}}
	if _, err := m.Generate(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	msgs := s.requests()[0].body["messages"]
	user := path(msgs, 0, "content")
	if path(user, 0, "text") != "What is in these?" {
		t.Errorf("text = %v", path(user, 0))
	}
	img := path(user, 1, "image")
	if path(img, "format") != "png" || path(img, "source", "bytes") != base64.StdEncoding.EncodeToString(png) {
		t.Errorf("image = %v", img)
	}
	doc := path(user, 2, "document")
	if path(doc, "format") != "pdf" || path(doc, "name") != "Q3 report-final-pdf" || path(doc, "source", "bytes") != base64.StdEncoding.EncodeToString(pdf) {
		t.Errorf("document = %v", doc)
	}
	if name := path(user, 3, "document", "name"); name != "Q3 report-final-pdf (2)" {
		t.Errorf("second document's name = %v, want a unique one", name)
	}
	if path(user, 4, "image", "source", "s3Location", "uri") != "s3://bucket/cat.jpg" || path(user, 4, "image", "format") != "jpeg" {
		t.Errorf("s3 image = %v", path(user, 4))
	}
	for i, want := range []string{"[image image/png at https://example.com/dog.png]", "[audio audio/wav, 4 bytes]",
		"[image image/tiff, 3 bytes]", fmt.Sprintf("[image image/png, %d bytes]", maxImageBytes+1)} {
		if got := path(user, 5+i, "text"); got != want {
			t.Errorf("part %d sent as %v, want the text %q", 5+i, path(user, 5+i), want)
		}
	}
	result := path(msgs, 2, "content", 0, "toolResult")
	if path(result, "content", 0, "text") != "Here it is." || path(result, "content", 1, "image", "format") != "webp" ||
		path(result, "content", 1, "image", "source", "bytes") != base64.StdEncoding.EncodeToString(png) {
		t.Errorf("tool result = %v", result)
	}

	// A model of no known family takes no media: they are described.
	s2 := newServer(t, jsonReply(t, "converse_final.json"))
	m2 := newTestModel(t, s2, "meta.llama3-1-70b-instruct-v1:0")
	if _, err := m2.Generate(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.ImagePart("image/png", png)}}}}); err != nil {
		t.Fatal(err)
	}
	if got := path(s2.requests()[0].body, "messages", 0, "content", 0, "text"); got != "[image image/png, 18 bytes]" {
		t.Errorf("image to a text model sent as %v", got)
	}
}

// TestCachePoints: cache points follow the system prompt, the tools (Claude
// only), the previous turn's answer and the conversation's end; NoCache
// and models without prompt caching get none; cached tokens are counted
// in InputTokens.
func TestCachePoints(t *testing.T) {
	conv := []llm.Message{
		{Role: llm.RoleUser, Text: "Weather in Paris?"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "t1", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)}}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "t1", Name: "get_weather", Content: "18°C"}}},
		{Role: llm.RoleAssistant, Text: "18°C in Paris."},
		{Role: llm.RoleUser, Text: "And Oslo?"},
	}
	const cp = `{"cachePoint":{"type":"default"}}`
	tests := []struct {
		name    string
		model   string
		noCache bool
		// want: where cache points are, as indexes into system, tools and
		// the messages' content ("m3" is the end of message 3).
		want []string
	}{
		{"claude", claudeID, false, []string{"system", "tools", "m3", "m4"}},
		{"claude no cache", claudeID, true, nil},
		{"nova", "us.amazon.nova-lite-v1:0", false, []string{"system", "m3", "m4"}},
		{"claude 3.5 sonnet", "anthropic.claude-3-5-sonnet-20240620-v1:0", false, nil},
		{"llama", "meta.llama3-1-70b-instruct-v1:0", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, jsonReply(t, "converse_cached.json"))
			m := newTestModel(t, s, tt.model)
			resp, err := m.Generate(t.Context(), &llm.Request{System: "You are terse.", Tools: providertest.WeatherTools(),
				Messages: conv, NoCache: tt.noCache})
			if err != nil {
				t.Fatal(err)
			}
			want := llm.Usage{InputTokens: 24 + 2048 + 1140, OutputTokens: 3, CacheReadTokens: 2048, CacheWriteTokens: 1140}
			if resp.Usage != want {
				t.Errorf("usage = %+v, want %+v", resp.Usage, want)
			}
			b := s.requests()[0].body
			var got []string
			isCP := func(v any) bool {
				raw, _ := json.Marshal(v)
				return string(raw) == cp
			}
			sys, _ := b["system"].([]any)
			for i, v := range sys {
				if isCP(v) {
					if i != len(sys)-1 {
						t.Errorf("system cache point at %d of %d", i, len(sys))
					}
					got = append(got, "system")
				}
			}
			tools, _ := path(b, "toolConfig", "tools").([]any)
			for i, v := range tools {
				if isCP(v) {
					if i != len(tools)-1 {
						t.Errorf("tools cache point at %d of %d", i, len(tools))
					}
					got = append(got, "tools")
				}
			}
			msgs, _ := b["messages"].([]any)
			for i := range msgs {
				content, _ := path(msgs, i, "content").([]any)
				for j, v := range content {
					if isCP(v) {
						if j != len(content)-1 {
							t.Errorf("message %d: cache point at %d of %d", i, j, len(content))
						}
						got = append(got, fmt.Sprintf("m%d", i))
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("cache points at %v, want %v", got, tt.want)
			}
			if caps := llm.CapabilitiesOf(m); caps.PromptCache != (tt.want != nil || tt.noCache) {
				t.Errorf("Capabilities.PromptCache = %v", caps.PromptCache)
			}
		})
	}
}

// TestCachedPrefixStable: the prompt of turn N+1 (tools, system, then the
// messages' blocks, the order a model reads them in) starts with turn N's
// up to its last cache point, block for block, byte for byte: what turn N
// wrote to the cache is read back.
func TestCachedPrefixStable(t *testing.T) {
	s := newServer(t, jsonReply(t, "converse_final.json"))
	m := newTestModel(t, s, claudeID)
	conv := []llm.Message{{Role: llm.RoleUser, Text: "Weather in Paris?"}}
	for turn := range 6 {
		if _, err := m.Generate(t.Context(), &llm.Request{System: "You are terse.", Tools: providertest.WeatherTools(), Messages: conv}); err != nil {
			t.Fatal(err)
		}
		call := fmt.Sprintf("t%d", turn)
		conv = append(conv,
			llm.Message{Role: llm.RoleAssistant, Text: fmt.Sprintf("answer %d", turn),
				ToolCalls: []llm.ToolCall{{ID: call, Name: "get_weather", Args: json.RawMessage(`{"city":"Oslo"}`)}}},
			llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: call, Name: "get_weather", Content: "3°C"}}},
			llm.Message{Role: llm.RoleUser, Text: fmt.Sprintf("question %d", turn+1)})
	}
	// prompt lists a request's blocks in prompt order; cached is how many
	// come before its last cache point.
	prompt := func(body map[string]any) (blocks []string, cached int) {
		add := func(prefix string, v any) {
			raw, _ := json.Marshal(v)
			if string(raw) == `{"cachePoint":{"type":"default"}}` {
				cached = len(blocks)
				return
			}
			blocks = append(blocks, prefix+string(raw))
		}
		for _, v := range path(body, "toolConfig", "tools").([]any) {
			add("tool ", v)
		}
		for _, v := range body["system"].([]any) {
			add("system ", v)
		}
		for i, msg := range body["messages"].([]any) {
			for _, v := range path(msg, "content").([]any) {
				add(fmt.Sprintf("%d %v ", i, path(msg, "role")), v)
			}
		}
		return blocks, cached
	}
	reqs := s.requests()
	for i := 1; i < len(reqs); i++ {
		prev, cached := prompt(reqs[i-1].body)
		next, _ := prompt(reqs[i].body)
		if cached == 0 || cached != len(prev) {
			t.Errorf("turn %d: last cache point after %d of %d blocks, want the end", i-1, cached, len(prev))
		}
		if len(next) < cached || fmt.Sprint(next[:cached]) != fmt.Sprint(prev[:cached]) {
			t.Errorf("turn %d does not start with turn %d's cached prefix:\n%q\n%q", i, i-1, prev[:cached], next)
		}
	}
}

func TestReasoningRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		first  reply
	}{
		{"converse", false, jsonReply(t, "converse_thinking.json")},
		{"converse-stream", true, reply{events: eventsFixture(t, "stream_thinking.events")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.first, jsonReply(t, "converse_final.json"))
			m := newTestModel(t, s, claudeID)
			temp := 0.3
			req := &llm.Request{Tools: providertest.WeatherTools(), Temperature: &temp,
				Reasoning: &llm.Reasoning{Effort: llm.EffortMedium},
				Messages:  []llm.Message{{Role: llm.RoleUser, Text: "Weather in Paris and Oslo?"}}}
			var streamed strings.Builder
			if tt.stream {
				req.OnText = func(d string) { streamed.WriteString(d) }
			}
			resp, err := m.Generate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Reasoning != "Paris first, then Oslo." || resp.Message.Text != "Checking Paris." {
				t.Errorf("reasoning, text = %q, %q", resp.Message.Reasoning, resp.Message.Text)
			}
			if tt.stream && streamed.String() != "Checking Paris." {
				t.Errorf("streamed %q: reasoning must not stream as the answer", streamed.String())
			}
			b := s.requests()[0].body
			if path(b, "additionalModelRequestFields", "thinking", "type") != "enabled" ||
				path(b, "additionalModelRequestFields", "thinking", "budget_tokens") != 8192.0 {
				t.Errorf("additionalModelRequestFields = %v", b["additionalModelRequestFields"])
			}
			if path(b, "inferenceConfig", "temperature") != nil || path(b, "inferenceConfig", "maxTokens") != float64(8192+defaultAnswerTokens) {
				t.Errorf("inferenceConfig = %v: no temperature while thinking, and room for the answer", b["inferenceConfig"])
			}

			next := &llm.Request{Tools: req.Tools, Messages: []llm.Message{req.Messages[0], resp.Message,
				{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "tooluse_paris", Name: "get_weather", Content: "18°C"}}}}}
			if _, err := m.Generate(t.Context(), next); err != nil {
				t.Fatal(err)
			}
			asst := path(s.requests()[1].body, "messages", 1, "content")
			if path(asst, 0, "reasoningContent", "reasoningText", "text") != "Paris first, then Oslo." ||
				path(asst, 0, "reasoningContent", "reasoningText", "signature") != "EqQBCkYIBxgCKkBsigPARIS0001" ||
				path(asst, 1, "reasoningContent", "redactedContent") != "cmVkYWN0ZWQtdGhpbmtpbmc=" ||
				path(asst, 2, "text") != "Checking Paris." || path(asst, 3, "toolUse", "toolUseId") != "tooluse_paris" {
				t.Errorf("assistant turn sent back = %v", asst)
			}
		})
	}
}

func TestThinkingBudget(t *testing.T) {
	tests := []struct {
		r                   llm.Reasoning
		maxTokens           int
		wantBudget, wantMax int
	}{
		{llm.Reasoning{Effort: llm.EffortMinimal}, 0, 1024, 1024 + defaultAnswerTokens},
		{llm.Reasoning{Effort: llm.EffortHigh}, 0, 16384, 16384 + defaultAnswerTokens},
		{llm.Reasoning{BudgetTokens: 500}, 0, 1024, 1024 + defaultAnswerTokens},
		{llm.Reasoning{BudgetTokens: 6000}, 20000, 6000, 20000},
		{llm.Reasoning{Effort: llm.EffortHigh}, 8000, 4000, 8000},
		{llm.Reasoning{Effort: llm.EffortLow}, 1500, 0, 1500},
	}
	for _, tt := range tests {
		b, mx := thinkingBudget(tt.r, tt.maxTokens)
		if b != tt.wantBudget || mx != tt.wantMax {
			t.Errorf("thinkingBudget(%+v, %d) = %d, %d; want %d, %d", tt.r, tt.maxTokens, b, mx, tt.wantBudget, tt.wantMax)
		}
	}
}

// TestProviderFromEnv: Bedrock is chosen by its API key, its model, or by
// name; plain AWS credentials do not choose it.
func TestProviderFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		ok   bool
		want provider.Config
	}{
		{"api key", map[string]string{"AWS_BEARER_TOKEN_BEDROCK": "tok-123", "AWS_REGION": "us-west-2"}, true,
			provider.Config{Provider: Name, APIKey: "tok-123", Region: "us-west-2"}},
		{"model, default region", map[string]string{"BEDROCK_MODEL": "amazon.nova-pro-v1:0", "AWS_DEFAULT_REGION": "eu-west-1"}, true,
			provider.Config{Provider: Name, Model: "amazon.nova-pro-v1:0", Region: "eu-west-1"}},
		{"chosen by name", map[string]string{"SWITCHBOARD_PROVIDER": "bedrock", "AWS_REGION": "us-east-1", "BEDROCK_BASE_URL": "https://vpce.example"}, true,
			provider.Config{Provider: Name, Region: "us-east-1", BaseURL: "https://vpce.example"}},
		{"aws keys alone", map[string]string{"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "us-east-1"}, false, provider.Config{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
			cfg, err := provider.ConfigFromEnv(lookup, Provider())
			if !tt.ok {
				if err == nil {
					t.Fatalf("configured by %v: %+v", tt.env, cfg)
				}
				if !strings.Contains(err.Error(), "AWS_BEARER_TOKEN_BEDROCK") {
					t.Errorf("the error does not say how to configure Bedrock: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Provider != tt.want.Provider || cfg.APIKey != tt.want.APIKey || cfg.Model != tt.want.Model ||
				cfg.Region != tt.want.Region || cfg.BaseURL != tt.want.BaseURL {
				t.Errorf("config = %+v, want %+v", cfg, tt.want)
			}
		})
	}
}

func TestNameAndDefaults(t *testing.T) {
	m, err := New(provider.Config{Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "bedrock/"+defaultModel {
		t.Errorf("name = %q", m.Name())
	}
	caps := llm.CapabilitiesOf(m)
	if !caps.Reasoning || !caps.PromptCache || !caps.StructuredOutput || !caps.Accept(llm.PartImage) || !caps.Accept(llm.PartDocument) ||
		caps.Accept(llm.PartAudio) || caps.ContextWindow != 200000 {
		t.Errorf("capabilities of the default model = %+v", caps)
	}
	// The region is part of the endpoint: none is a configuration error.
	if _, err := New(provider.Config{}); err == nil || !strings.Contains(err.Error(), "AWS_REGION") {
		t.Errorf("New without a region: %v", err)
	}
	// The model id is escaped into the path.
	s := newServer(t, jsonReply(t, "converse_final.json"))
	arn := "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	m2 := newTestModel(t, s, arn)
	if _, err := m2.Generate(t.Context(), providertest.UserReq("hi")); err != nil {
		t.Fatal(err)
	}
	if p := s.requests()[0].path; p != "/model/"+arn+"/converse" {
		t.Errorf("path = %q", p)
	}
	if !llm.CapabilitiesOf(m2).PromptCache {
		t.Errorf("an inference profile ARN of Claude is not known as Claude")
	}
}

func TestFamilies(t *testing.T) {
	tests := []struct {
		id                              string
		reasoning, cache, forced, media bool
	}{
		{"anthropic.claude-3-7-sonnet-20250219-v1:0", true, true, true, true},
		{"eu.anthropic.claude-opus-4-1-20250805-v1:0", true, true, true, true},
		{"global.anthropic.claude-haiku-4-5-20251001-v1:0", true, true, true, true},
		{"anthropic.claude-3-5-haiku-20241022-v1:0", false, true, true, true},
		{"anthropic.claude-3-haiku-20240307-v1:0", false, false, true, true},
		{"us.amazon.nova-premier-v1:0", false, true, true, true},
		{"mistral.mistral-large-2407-v1:0", false, false, true, false},
		{"cohere.command-r-plus-v1:0", false, false, false, false},
	}
	for _, tt := range tests {
		c := familyOf(tt.id).capabilities()
		if c.Reasoning != tt.reasoning || c.PromptCache != tt.cache || c.StructuredOutput != tt.forced || c.Accept(llm.PartImage) != tt.media {
			t.Errorf("%s: capabilities = %+v", tt.id, c)
		}
	}
}
