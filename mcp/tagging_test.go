package mcp

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestSamplingTaggedWithItsRun: under protocol 2026-07-28 a tool's sampling
// request is an input request of the call's result, so it is tagged with
// the run that made the call even when several calls of the same server
// are in flight at once.
func TestSamplingTaggedWithItsRun(t *testing.T) {
	srv := gomcp.NewServer(&gomcp.Implementation{Name: "sampler", Version: "1"}, nil)
	var gate sync.WaitGroup
	const runs = 3
	gate.Add(runs)
	gomcp.AddTool(srv, &gomcp.Tool{Name: "ask_model", Description: "Asks the host's model."},
		func(_ context.Context, req *gomcp.CallToolRequest, _ struct{}) (*gomcp.CallToolResult, any, error) {
			if len(req.Params.InputResponses) == 0 {
				gate.Done()
				gate.Wait() // every run's call is in flight before any asks
				return &gomcp.CallToolResult{InputRequests: gomcp.InputRequestMap{
					"q": &gomcp.CreateMessageParams{MaxTokens: 10, Messages: []*gomcp.SamplingMessage{
						{Role: "user", Content: &gomcp.TextContent{Text: "hi"}}}}}}, nil, nil
			}
			msg := req.Params.InputResponses["q"].(*gomcp.CreateMessageWithToolsResult)
			return &gomcp.CallToolResult{Content: msg.Content}, nil, nil
		})
	ct, st := gomcp.NewInMemoryTransports()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()

	var mu sync.Mutex
	tagged := map[string]int{}
	sampler := agent.SamplerFunc(func(_ context.Context, req agent.SamplingRequest) (agent.SamplingResult, error) {
		mu.Lock()
		tagged[req.Run]++
		mu.Unlock()
		return agent.SamplingResult{Model: "m", Text: "sampled"}, nil
	})
	cfg := quickConfig(ServerConfig{Name: "s", Transport: ct})
	cfg.Sampler = sampler
	m := newManager(t, cfg)
	a, err := agent.New(ctx, agent.Config{Toolsets: []agent.Toolset{m.Toolset()}, Permissions: agent.AllowAll(),
		Model: llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
			if len(llm.LastToolResults(req)) > 0 {
				return llm.Say("done")
			}
			return llm.Calls(llm.CallTool("", "mcp__s__ask_model", json.RawMessage(`{}`)))
		}))})
	if err != nil {
		t.Fatal(err)
	}
	runIDs := make(chan string, runs)
	var wg sync.WaitGroup
	for range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ans, err := a.Run(ctx, "go")
			if err != nil {
				t.Error(err)
				return
			}
			runIDs <- ans.Run
		}()
	}
	wg.Wait()
	close(runIDs)
	mu.Lock()
	defer mu.Unlock()
	for id := range runIDs {
		if tagged[id] != 1 {
			t.Errorf("run %s: %d sampling requests tagged with it, want 1 (all: %v)", id, tagged[id], tagged)
		}
	}
	if tagged[""] != 0 {
		t.Errorf("%d sampling requests not tagged with a run", tagged[""])
	}
}
