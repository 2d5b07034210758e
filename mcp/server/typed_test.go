package server_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// TestTypedRunner: an agent with Config.Output served as a Runner declares
// its answer's schema as the tool's outputSchema and returns the typed
// answer as structuredContent, with its JSON as the text content (MCP
// 2025-06-18 and later, "Structured Content"); a schema MCP cannot declare
// (not of type object) is left out and the answer is text only. A go-sdk
// client lists and calls the tools.
func TestTypedRunner(t *testing.T) {
	const weather = `{"type":"object","properties":{"city":{"type":"string"},"temp_c":{"type":"number"}},"required":["city","temp_c"]}`
	cases := []struct {
		name       string
		schema     string
		answer     string
		wantSchema bool
	}{
		{name: "object", schema: weather, answer: `{"city":"Oslo","temp_c":4}`, wantSchema: true},
		{name: "array", schema: `{"type":"array","items":{"type":"string"}}`, answer: `["Oslo","Bergen"]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := agent.New(context.Background(), agent.Config{Name: "forecaster", Description: "forecasts",
				Model:  llm.NewScripted(llm.Say("not JSON"), llm.Say(tc.answer)),
				Output: &llm.Output{Name: "forecast", Schema: json.RawMessage(tc.schema)}})
			if err != nil {
				t.Fatal(err)
			}
			cs := connectMem(t, newServer(t, server.Config{Runners: []agent.Runner{a}}), nil)
			ctx := testkit.Ctx(t, 30*time.Second)
			tools, err := cs.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) != 1 {
				t.Fatalf("tools: %v, %+v", err, tools)
			}
			var got map[string]any
			if s := tools.Tools[0].OutputSchema; s != nil {
				b, _ := json.Marshal(s)
				_ = json.Unmarshal(b, &got)
			}
			var want map[string]any
			_ = json.Unmarshal([]byte(tc.schema), &want)
			if tc.wantSchema != (got != nil) || got != nil && got["type"] != want["type"] || got != nil && len(got["properties"].(map[string]any)) != 2 {
				t.Fatalf("outputSchema = %v, want declared: %v", got, tc.wantSchema)
			}
			res, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "forecaster", Arguments: map[string]any{"input": "Oslo?"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || len(res.Content) != 1 {
				t.Fatalf("result %+v", res)
			}
			if text := res.Content[0].(*gomcp.TextContent).Text; text != tc.answer {
				t.Fatalf("text content %q, want the answer's JSON %s", text, tc.answer)
			}
			if !tc.wantSchema {
				if res.StructuredContent != nil {
					t.Fatalf("structuredContent %v for an answer that is not an object", res.StructuredContent)
				}
				return
			}
			b, _ := json.Marshal(res.StructuredContent)
			var sc struct {
				City  string  `json:"city"`
				TempC float64 `json:"temp_c"`
			}
			if err := json.Unmarshal(b, &sc); err != nil || sc.City != "Oslo" || sc.TempC != 4 {
				t.Fatalf("structuredContent %s: %v", b, err)
			}
		})
	}
}
