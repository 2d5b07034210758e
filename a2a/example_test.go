package a2a_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/switchboard-dev/switchboard/a2a"
	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// Serve an agent as an A2A peer, then delegate to it from another
// process's point of view: the peer becomes a tool.
func Example() {
	ctx := context.Background()
	// The served agent (a scripted model, so that the example runs offline).
	worker, _ := agent.New(ctx, agent.Config{
		Name: "shouter", Description: "Repeats what it is told, loudly.",
		Model: llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
			return llm.Say(strings.ToUpper(req.Messages[len(req.Messages)-1].Text))
		})),
	})
	srv, _ := a2a.NewServer(ctx, a2a.ServerConfig{Agent: worker, AskClient: true}) // questions go to the client
	defer srv.Close()
	hs := httptest.NewServer(srv) // or mount srv in your own mux
	defer hs.Close()

	// The client side: the peer's card is resolved and the peer becomes a tool.
	peers, err := a2a.NewToolset(ctx, a2a.ToolsetConfig{Peers: []a2a.Peer{{Name: "shouter", URL: hs.URL}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer peers.Close()
	tools, _ := peers.Tools(ctx)
	fmt.Println(tools[0].Spec().Name, tools[0].Spec().Source)
	res, err := tools[0].Call(ctx, []byte(`{"message":"hello over a2a"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Parts[0].Text)
	// Output:
	// a2a__shouter a2a:shouter
	// HELLO OVER A2A
}
