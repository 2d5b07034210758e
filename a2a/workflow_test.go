package a2a

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/workflow"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestServeWorkflow serves a workflow (not an *agent.Agent) as an A2A peer
// and delegates to it: the card names the workflow and the answer is the
// last step's.
func TestServeWorkflow(t *testing.T) {
	ctx := ctxT(t)
	step := func(name string) *agent.Agent {
		a, err := agent.New(ctx, agent.Config{Name: name, Model: llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
			return llm.Say(name + "(" + lastUser(req) + ")")
		}))})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	seq, err := workflow.NewSequential(workflow.SequentialConfig{Common: workflow.Common{Name: "chain", Description: "Plans, then writes."},
		Steps: []workflow.Step{{Runner: step("plan")}, {Runner: step("write")}}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(ctx, ServerConfig{Agent: seq})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close(); _ = srv.Close() })
	if card := srv.Card(ctx, hs.URL); card.Name != "chain" || len(card.Skills) != 1 || card.Skills[0].ID != "chat" {
		t.Fatalf("card = %s %+v", card.Name, card.Skills)
	}
	peers, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "chain", URL: hs.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = peers.Close() })
	tools, _ := peers.Tools(ctx)
	for range 2 { // each message starts the workflow afresh
		res, err := tools[0].Call(context.WithoutCancel(ctx), []byte(`{"message":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Text(); !strings.Contains(got, "write(plan(x))") {
			t.Fatalf("result = %q", got)
		}
	}
}
