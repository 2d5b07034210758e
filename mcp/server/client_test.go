package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// TestClientBeforeServer: a Client made before the server (as a gateway
// hands one to an mcp.Manager before the server that serves its tools
// exists) asks the caller of the call being served, found by the
// question's run id where the context is lost (as a Manager's servers'
// requests lose it), at every protocol revision; given to no server it
// finds no call and declines.
func TestClientBeforeServer(t *testing.T) {
	for _, c := range []struct {
		name, protocol string
		served         bool
		want           string
	}{
		{"direct requests", "2025-11-25", true, "accept alice"},
		{"multi round-trip", "", true, "accept alice"},
		{"not the server's client", "2025-11-25", false, "decline <nil>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			client := new(server.Client)
			elicitor := client.Elicitor() // before any server exists
			ask := agent.NewFuncTool(agent.ToolSpec{Name: "ask", ReadOnly: true},
				func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
					call, _ := agent.CallFromContext(ctx)
					res, err := elicitor.Elicit(context.WithoutCancel(context.Background()), agent.Elicitation{Run: call.Run,
						Kind: agent.ElicitForm, Message: "name?",
						Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
					if err != nil {
						return nil, err
					}
					return agent.TextResult(fmt.Sprintf("%s %v", res.Action, res.Content["name"])), nil
				})
			cfg := server.Config{Toolsets: []agent.Toolset{agent.NewToolset("t", ask)}}
			if c.served {
				cfg.Client = client
			}
			srv := newServer(t, cfg)
			cs := connectMemAt(t, srv, &gomcp.ClientOptions{
				ElicitationHandler: func(context.Context, *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
					return &gomcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "alice"}}, nil
				}}, c.protocol)
			if txt, isErr := callText(t, cs, "ask", map[string]any{}); isErr || txt != c.want {
				t.Errorf("%q (error %v), want %q", txt, isErr, c.want)
			}
		})
	}
}

// TestAddAudit: a receiver added after New gets every call's record, as
// Config.Audit does.
func TestAddAudit(t *testing.T) {
	var mu sync.Mutex
	var fromConfig, added []server.AuditRecord
	echo := agent.NewFuncTool(agent.ToolSpec{Name: "echo", ReadOnly: true},
		func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult("hi"), nil })
	srv := newServer(t, server.Config{Toolsets: []agent.Toolset{agent.NewToolset("t", echo)}, RateLimit: 0.001, RateBurst: 1,
		Audit: func(_ context.Context, r server.AuditRecord) {
			mu.Lock()
			fromConfig = append(fromConfig, r)
			mu.Unlock()
		}})
	srv.AddAudit(func(_ context.Context, r server.AuditRecord) { mu.Lock(); added = append(added, r); mu.Unlock() })
	cs := connectMem(t, srv, nil)
	callText(t, cs, "echo", map[string]any{})
	callText(t, cs, "echo", map[string]any{})
	mu.Lock()
	defer mu.Unlock()
	if len(added) != 2 || len(fromConfig) != 2 || added[0].Outcome != "ok" || added[1].Outcome != "rate_limited" {
		t.Errorf("added %+v, Config.Audit %+v", added, fromConfig)
	}
	if srv.Config().Audit == nil {
		t.Error("Config() lost Config.Audit")
	}
}
