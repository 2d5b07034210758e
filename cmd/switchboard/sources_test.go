package main

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/a2a"
	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestSkillsAndA2APeers: the gateway serves a skills folder (its tools, the
// skill as a prompt) and an A2A peer (a Switchboard agent served by
// a2a.Server in this process) as a delegation tool that answers.
func TestSkillsAndA2APeers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway")
	}
	peer, err := agent.New(context.Background(), agent.Config{Name: "helper", Description: "answers questions",
		Model: llm.NewCyclic(llm.Say("the peer's answer"))})
	if err != nil {
		t.Fatal(err)
	}
	as, err := a2a.NewServer(context.Background(), a2a.ServerConfig{Agent: peer})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(as.Handler())
	defer func() { hs.Close(); as.Close() }()

	url := startHTTP(t, gatewayEnv(t), "-skills", filepath.Join("testdata", "skills"), "-a2a", "helper="+hs.URL, "-allow-all")
	c := gomcp.NewClient(&gomcp.Implementation{Name: "sources", Version: "1"}, nil)
	cs, err := c.Connect(ctx(t, 30*time.Second), &gomcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	lt, err := cs.ListTools(ctx(t, 10*time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	var delegate string
	for _, n := range names {
		if strings.HasPrefix(n, "a2a__helper") {
			delegate = n
		}
	}
	if !slices.Contains(names, "activate_skill") || delegate == "" {
		t.Fatalf("tools %v: want activate_skill and an a2a__helper tool", names)
	}
	res, err := cs.CallTool(ctx(t, 30*time.Second), &gomcp.CallToolParams{Name: "activate_skill", Arguments: map[string]any{"name": "greet"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*gomcp.TextContent).Text, "Say hello") {
		t.Errorf("activate_skill: %v %+v", err, res)
	}
	p, err := cs.GetPrompt(ctx(t, 10*time.Second), &gomcp.GetPromptParams{Name: "greet"})
	if err != nil || !strings.Contains(p.Messages[0].Content.(*gomcp.TextContent).Text, "Say hello") {
		t.Errorf("prompt greet: %v %+v", err, p)
	}
	spec := lt.Tools[slices.Index(names, delegate)]
	args := map[string]any{"message": "hi"}
	if b, _ := spec.InputSchema.(map[string]any); b != nil {
		if props, _ := b["properties"].(map[string]any); props != nil {
			if _, ok := props["input"]; ok {
				args = map[string]any{"input": "hi"}
			}
		}
	}
	res, err = cs.CallTool(ctx(t, 60*time.Second), &gomcp.CallToolParams{Name: delegate, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*gomcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError || !strings.Contains(text, "the peer's answer") {
		t.Errorf("%s %v: error %v, %q", delegate, args, res.IsError, text)
	}
}
