package a2a_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/switchboard-dev/switchboard/a2a"
	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/store"
	"github.com/switchboard-dev/switchboard/llm"
)

// Replicas of an A2A server share their tasks (and push notification
// configs) through one JetStream key-value bucket: each opens it with
// bus/store's OpenTasks and gives its stores to ServerConfig. A task one
// replica ran is in the bucket for all, for the TTL after its last update
// (default 24 hours).
func ExampleServerConfig_store() {
	ctx := context.Background()
	b, err := bus.New(ctx, bus.Config{}) // in production: URLs of the NATS cluster
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	tasks, err := store.OpenTasks(ctx, b, store.TasksConfig{Name: "a2a_tasks_greeter", TTL: 7 * 24 * time.Hour})
	if err != nil {
		fmt.Println(err)
		return
	}
	greeter, _ := agent.New(ctx, agent.Config{Name: "greeter", Model: llm.NewScripted(llm.Say("hello"))})
	srv, _ := a2a.NewServer(ctx, a2a.ServerConfig{Agent: greeter, Store: tasks.Store, PushStore: tasks.PushConfigs})
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()

	peers, err := a2a.NewToolset(ctx, a2a.ToolsetConfig{Peers: []a2a.Peer{{Name: "greeter", URL: hs.URL}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer peers.Close()
	tools, _ := peers.Tools(ctx)
	res, err := tools[0].Call(ctx, []byte(`{"message":"hi"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	kv, _ := b.JetStream().KeyValue(ctx, "a2a_tasks_greeter")
	keys, _ := kv.Keys(ctx)
	fmt.Println(res.Parts[0].Text, len(keys))
	// Output: hello 1
}
