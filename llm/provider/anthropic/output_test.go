package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

func TestGenerationOf(t *testing.T) {
	tests := []struct {
		model              string
		want               generation
		structured, adapts bool
	}{
		{"claude-sonnet-4-5", generation{4, 5}, true, false},
		{"claude-sonnet-4-5-20250929", generation{4, 5}, true, false},
		{"claude-opus-4-1-20250805", generation{4, 1}, false, false},
		{"claude-opus-4-20250514", generation{4, 0}, false, false},
		{"claude-haiku-4-5", generation{4, 5}, true, false},
		{"claude-opus-4-6", generation{4, 6}, true, true},
		{"claude-opus-4-7", generation{4, 7}, true, true},
		{"claude-sonnet-5", generation{5, 0}, true, true},
		{"claude-3-7-sonnet-latest", generation{3, 7}, false, false},
		{"claude-3-5-haiku-20241022", generation{3, 5}, false, false},
		{"claude-3-haiku-20240307", generation{3, 0}, false, false},
		{"my-proxy-model", generation{}, false, false},
	}
	for _, tt := range tests {
		g := generationOf(tt.model)
		if g != tt.want || g.structuredOutputs() != tt.structured || g.adaptiveThinking() != tt.adapts {
			t.Errorf("%s: %+v structured %v adaptive %v; want %+v %v %v", tt.model, g, g.structuredOutputs(), g.adaptiveThinking(),
				tt.want, tt.structured, tt.adapts)
		}
	}
}

var contactSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"email":{"type":"string"},` +
	`"plan_interest":{"type":"string"},"demo_requested":{"type":"boolean"}},"required":["name","email","plan_interest","demo_requested"],"additionalProperties":false}`)

const contactAnswer = `{"name":"John Smith","email":"john@example.com","plan_interest":"Enterprise","demo_requested":true}`

// TestStructuredOutput: a model with structured outputs gets
// output_config.format and answers in text; an older one gets a forced
// tool whose input is the answer's text; both stream it through OnText.
func TestStructuredOutput(t *testing.T) {
	tests := []struct {
		name, model string
		tools       []llm.ToolDef
		reasoning   *llm.Reasoning
		reply       providertest.Reply
		stream      bool
		wantChoice  any // tool_choice sent
		wantTool    string
	}{
		{"output_config json", "claude-sonnet-4-5", nil, nil, jsonReply(t, "anthropic_messages_output.json"), false, nil, ""},
		{"output_config stream", "claude-sonnet-4-5", providertest.WeatherTools(), nil, sseReply(t, "anthropic_stream_output.sse"), true, nil, ""},
		{"output_config with thinking", "claude-sonnet-4-5", nil, &llm.Reasoning{Effort: llm.EffortLow}, jsonReply(t, "anthropic_messages_output.json"), false, nil, ""},
		{"forced tool json", "claude-3-5-haiku-latest", nil, nil, jsonReply(t, "anthropic_messages_answer_tool.json"), false,
			map[string]any{"type": "tool", "name": "contact"}, "contact"},
		{"forced tool stream, beside other tools", "claude-3-5-haiku-latest", providertest.WeatherTools(), nil, sseReply(t, "anthropic_stream_answer_tool.sse"), true,
			map[string]any{"type": "any"}, "contact"},
		{"forced tool with thinking: offered, not forced", "claude-3-7-sonnet-latest", nil, &llm.Reasoning{Effort: llm.EffortMinimal},
			jsonReply(t, "anthropic_messages_answer_tool.json"), false, nil, "contact"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.NewServer(t, tt.reply)
			m, err := newAnthropic(provider.Config{APIKey: providertest.AnthropicKey, BaseURL: p.URL, Model: tt.model, HTTPClient: p.Client()})
			if err != nil {
				t.Fatal(err)
			}
			var streamed strings.Builder
			req := &llm.Request{Tools: tt.tools, Reasoning: tt.reasoning,
				Messages: []llm.Message{{Role: llm.RoleUser, Text: "Extract the contact: John Smith (john@example.com) wants Enterprise and a demo."}},
				Output:   &llm.Output{Name: "contact", Schema: contactSchema}}
			if tt.stream {
				req.OnText = func(d string) { streamed.WriteString(d) }
			}
			resp, err := m.Generate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			providertest.JSONEqual(t, "answer", json.RawMessage(resp.Message.Text), contactAnswer)
			if len(resp.Message.ToolCalls) != 0 {
				t.Errorf("the answer came as tool calls: %+v", resp.Message.ToolCalls)
			}
			if tt.stream && streamed.String() != resp.Message.Text {
				t.Errorf("streamed %q, answer %q", streamed.String(), resp.Message.Text)
			}
			seen := p.Requests()[0]
			body := seen.Body
			if got := providertest.Path(body, "tool_choice"); !jsonSame(got, tt.wantChoice) {
				t.Errorf("tool_choice = %v, want %v", got, tt.wantChoice)
			}
			tools, _ := providertest.Path(body, "tools").([]any)
			if tt.wantTool == "" {
				if providertest.Path(body, "output_config", "format", "type") != "json_schema" ||
					providertest.Path(body, "output_config", "format", "schema", "required", 3) != "demo_requested" {
					t.Errorf("output_config = %v", providertest.Path(body, "output_config"))
				}
				if len(tools) != len(tt.tools) {
					t.Errorf("tools = %v", tools)
				}
				if seen.Header.Get("anthropic-beta") != "" {
					t.Errorf("anthropic-beta = %q: structured outputs need none", seen.Header.Get("anthropic-beta"))
				}
				return
			}
			if providertest.Path(body, "output_config", "format") != nil {
				t.Errorf("output_config.format sent to %s", tt.model)
			}
			last := tools[len(tools)-1]
			if providertest.Path(last, "name") != tt.wantTool || providertest.Path(last, "input_schema", "required", 0) != "name" ||
				providertest.Path(last, "cache_control") != nil {
				t.Errorf("answer tool = %v", last)
			}
		})
	}
}

// TestAnswerToolName: the forced tool takes Output.Name, "answer" without
// one, and a suffix when a tool of the request has the name already.
func TestAnswerToolName(t *testing.T) {
	tests := []struct {
		out   *llm.Output
		tools []llm.ToolDef
		want  string
	}{
		{nil, nil, ""},
		{&llm.Output{}, nil, "answer"},
		{&llm.Output{Name: "report"}, []llm.ToolDef{{Name: "x"}}, "report"},
		{&llm.Output{}, []llm.ToolDef{{Name: "answer"}, {Name: "answer_2"}}, "answer_3"},
	}
	for _, tt := range tests {
		if got := answerTool(&llm.Request{Output: tt.out, Tools: tt.tools}); got != tt.want {
			t.Errorf("answerTool(%+v, %v) = %q, want %q", tt.out, tt.tools, got, tt.want)
		}
	}
	if got := forcedTool(generationOf("claude-sonnet-4-5"), &llm.Request{Output: &llm.Output{}}); got != "" {
		t.Errorf("a model with structured outputs forces %q", got)
	}
}

func jsonReply(t *testing.T, name string) providertest.Reply {
	return providertest.Reply{Status: 200, ContentType: "application/json", Body: providertest.Fixture(t, name)}
}

func sseReply(t *testing.T, name string) providertest.Reply {
	return providertest.Reply{Status: 200, ContentType: "text/event-stream", Body: providertest.Fixture(t, name)}
}

// jsonSame compares decoded JSON values.
func jsonSame(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
