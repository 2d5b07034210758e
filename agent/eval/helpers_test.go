package eval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/eval"
	"github.com/switchboard-dev/switchboard/llm"
)

// weatherTool is the tool of the test agent; desc is its description, so a
// test can break it.
func weatherTool(desc string) agent.Tool {
	type in struct {
		City string `json:"city"`
	}
	return agent.TypedTool(agent.ToolSpec{
		Name: "get_weather", Description: desc,
		InputSchema: []byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	}, func(ctx context.Context, a in) (string, error) {
		return "sunny in " + a.City, nil
	})
}

const (
	weatherPrompt = "You answer questions about the weather with the get_weather tool."
	weatherDesc   = "Current weather for a city."
)

// agentOf returns the eval's agent builder of the weather agent.
func agentOf(prompt, desc string) func(ctx context.Context, c *eval.Case, m llm.Model) (agent.Runner, error) {
	return func(ctx context.Context, c *eval.Case, m llm.Model) (agent.Runner, error) {
		return agent.New(ctx, agent.Config{Name: "weather", Model: m, Instructions: prompt,
			Tools: []agent.Tool{weatherTool(desc)}})
	}
}

// weatherModel is the stand-in for a real model: stateless, so that cases
// share it in parallel. It calls get_weather for each city it knows in the
// input, then summarises the results (as JSON when asked).
func weatherModel() llm.Model {
	return llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		var input string
		for _, m := range req.Messages {
			if m.Role == llm.RoleUser {
				input = m.Text
			}
		}
		last := req.Messages[len(req.Messages)-1]
		if last.Role == llm.RoleTool {
			var lines []string
			for _, r := range last.ToolResults {
				text := r.Content
				if i := strings.Index(text, "sunny in "); i >= 0 {
					text = strings.TrimSpace(strings.TrimSuffix(text[i:], "</tool_result>"))
				}
				lines = append(lines, text)
			}
			if strings.Contains(input, "JSON") {
				city := strings.TrimPrefix(lines[0], "sunny in ")
				b, _ := json.Marshal(map[string]string{"city": city, "sky": "sunny"})
				return llm.Say(string(b))
			}
			return llm.Say(strings.Join(lines, "\n"))
		}
		var calls []llm.ToolCall
		for i, city := range []string{"Porto", "Lisbon", "Paris"} {
			if strings.Contains(input, city) {
				calls = append(calls, llm.CallTool(fmt.Sprintf("c%d", i), "get_weather", map[string]string{"city": city}))
			}
		}
		if len(calls) == 0 {
			return llm.Say("Hello!")
		}
		return llm.Calls(calls...)
	}))
}
