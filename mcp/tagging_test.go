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
	sampler := testkit.SamplerFunc(func(_ context.Context, req agent.SamplingRequest) (agent.SamplingResult, error) {
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
			if len(testkit.LastToolResults(req)) > 0 {
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

// completer is an Elicitor that accepts every question and records the
// questions and the completions it hears of.
type completer struct {
	mu   sync.Mutex
	asks []agent.Elicitation
	done chan agent.Elicitation
}

func (c *completer) Elicit(_ context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
	c.mu.Lock()
	c.asks = append(c.asks, e)
	c.mu.Unlock()
	return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
}

func (c *completer) ElicitationComplete(_ context.Context, e agent.Elicitation) { c.done <- e }

// TestElicitationComplete: a server's notifications/elicitation/complete
// reaches an Elicitor that has the optional ElicitationComplete method, placed in the
// run and call of the URL-mode question it ends.
func TestElicitationComplete(t *testing.T) {
	srv := gomcp.NewServer(&gomcp.Implementation{Name: "auth", Version: "1"}, nil)
	gomcp.AddTool(srv, &gomcp.Tool{Name: "login", Description: "Signs in through a browser."},
		func(ctx context.Context, req *gomcp.CallToolRequest, _ struct{}) (*gomcp.CallToolResult, any, error) {
			if len(req.Params.InputResponses) == 0 {
				return &gomcp.CallToolResult{InputRequests: gomcp.InputRequestMap{"u": &gomcp.ElicitParams{
					Mode: "url", URL: "https://auth.example/login", ElicitationID: "el-1", Message: "Sign in"}}}, nil, nil
			}
			_ = req.Session.NotifyElicitationComplete(ctx, &gomcp.ElicitationCompleteParams{ElicitationID: "el-1"})
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "signed in"}}}, nil, nil
		})
	ct, st := gomcp.NewInMemoryTransports()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	el := &completer{done: make(chan agent.Elicitation, 1)}
	cfg := quickConfig(ServerConfig{Name: "auth", Transport: ct})
	cfg.Elicitor = el
	m := newManager(t, cfg)
	a, err := agent.New(ctx, agent.Config{Toolsets: []agent.Toolset{m.Toolset()}, Permissions: agent.AllowAll(),
		Model: llm.NewScripted(llm.Calls(llm.CallTool("c1", "mcp__auth__login", json.RawMessage(`{}`))), llm.Say("done"))})
	if err != nil {
		t.Fatal(err)
	}
	ans, err := a.Run(ctx, "sign in")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-el.done:
		if got.ID != "el-1" || got.Kind != agent.ElicitURL || got.Run != ans.Run || got.Call != "c1" || got.Source.Name != "auth" {
			t.Fatalf("completion = %+v (run %s)", got, ans.Run)
		}
	case <-ctx.Done():
		t.Fatal("no completion forwarded")
	}
	el.mu.Lock()
	defer el.mu.Unlock()
	if len(el.asks) != 1 || el.asks[0].Kind != agent.ElicitURL || el.asks[0].URL != "https://auth.example/login" {
		t.Fatalf("questions = %+v", el.asks)
	}
}
