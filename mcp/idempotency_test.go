package mcp

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// An agent's tool call reaches the MCP server with its idempotency key in
// the request's _meta (dev.switchboard/idempotency-key), and the tool's
// idempotentHint becomes ToolSpec.Idempotent.
func TestIdempotencyKeyInMeta(t *testing.T) {
	ctx := testkit.Ctx(t, 20*time.Second)
	var mu sync.Mutex
	var keys []any
	srv := gomcp.NewServer(&gomcp.Implementation{Name: "pay", Version: "1"}, nil)
	handler := func(_ context.Context, req *gomcp.CallToolRequest, _ echoArgs) (*gomcp.CallToolResult, any, error) {
		mu.Lock()
		keys = append(keys, req.Params.GetMeta()[idempotencyMetaKey])
		mu.Unlock()
		return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "paid"}}}, nil, nil
	}
	gomcp.AddTool(srv, &gomcp.Tool{Name: "charge", Annotations: &gomcp.ToolAnnotations{IdempotentHint: true}}, handler)
	gomcp.AddTool(srv, &gomcp.Tool{Name: "refund"}, handler)
	m, err := New(ctx, Config{Servers: []ServerConfig{{Name: "pay", Server: srv}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tools, err := m.Toolset().Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	idem := map[string]bool{}
	for _, tl := range tools {
		idem[tl.Spec().Name] = tl.Spec().Idempotent
	}
	if !idem["mcp__pay__charge"] || idem["mcp__pay__refund"] {
		t.Fatalf("idempotent hints: %v", idem)
	}

	a, err := agent.New(ctx, agent.Config{Toolsets: []agent.Toolset{m.Toolset()}, Permissions: agent.AllowAll(),
		Model: llm.NewScripted(llm.Calls(llm.CallTool("k1", "mcp__pay__charge", map[string]any{"text": "x"})), llm.Say("done"))})
	if err != nil {
		t.Fatal(err)
	}
	ans, err := a.Run(ctx, "charge")
	if err != nil {
		t.Fatal(err)
	}
	// A call outside a run carries no key.
	if _, err := tools[0].Call(ctx, json.RawMessage(`{"text":"y"}`)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 2 || keys[0] != ans.Run+"/k1" || keys[1] != nil {
		t.Fatalf("keys the server saw: %v (run %s)", keys, ans.Run)
	}
}
