package gemini_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/gemini"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

// TestAgentRun runs an agent on the Gemini model against a local server:
// the parallel calls without ids run once each, and the next turn sends
// the signed model turn back with the two function responses in order.
func TestAgentRun(t *testing.T) {
	p := providertest.NewServer(t,
		providertest.Reply{Status: 200, ContentType: "application/json", Body: providertest.Fixture(t, "gemini_tools.json")},
		providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.GeminiFinal)})
	model, err := gemini.New(provider.Config{APIKey: providertest.GeminiKey, BaseURL: p.URL, HTTPClient: p.Client()})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex // the agent runs parallel calls concurrently
	ran := map[string]int{}
	weather := agent.NewFuncTool(agent.ToolSpec{Name: "get_weather", Description: "Current weather of a city.", ReadOnly: true,
		InputSchema: providertest.WeatherTools()[0].Schema}, func(_ context.Context, args json.RawMessage) (*agent.Result, error) {
		var in struct{ City string }
		_ = json.Unmarshal(args, &in)
		mu.Lock()
		ran[in.City]++
		mu.Unlock()
		return agent.TextResult(in.City + ": 18°C"), nil
	})
	a, err := agent.New(t.Context(), agent.Config{Name: "weather", Model: model, Tools: []agent.Tool{weather}})
	if err != nil {
		t.Fatal(err)
	}
	ans, err := a.Run(t.Context(), "Weather in Paris and Oslo?")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if ans.Text != "Paris is 18°C; Oslo is unknown." || ran["Paris"] != 1 || ran["Oslo"] != 1 || ans.ToolCalls != 2 {
		t.Errorf("answer %q after calls %v (%d)", ans.Text, ran, ans.ToolCalls)
	}
	if want := (llm.Usage{InputTokens: 118 + 171, OutputTokens: 94 + 10, CacheReadTokens: 64, ReasoningTokens: 63}); ans.Usage != want {
		t.Errorf("usage = %+v, want %+v", ans.Usage, want)
	}
	second := p.Requests()[1].Body
	model1 := providertest.Path(second, "contents", 1)
	if providertest.Path(model1, "role") != "model" || providertest.Path(model1, "parts", 1, "thoughtSignature") == nil {
		t.Errorf("model turn sent back without its signature: %v", model1)
	}
	res := providertest.Path(second, "contents", 2, "parts")
	out0, _ := providertest.Path(res, 0, "functionResponse", "response", "output").(string)
	out1, _ := providertest.Path(res, 1, "functionResponse", "response", "output").(string)
	if providertest.Path(res, 0, "functionResponse", "name") != "get_weather" || providertest.Path(res, 1, "functionResponse", "name") != "get_weather" ||
		!strings.Contains(out0, "Paris: 18°C") || !strings.Contains(out1, "Oslo: 18°C") {
		t.Errorf("function responses = %v", res)
	}
}
