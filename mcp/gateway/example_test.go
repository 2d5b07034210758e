package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/nats-io/nats.go"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/mcp/gateway"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// A gateway alone (no NATS): the server's endpoint at /mcp and the
// health probes beside it.
func Example() {
	ctx := context.Background()
	srv, err := server.New(ctx, server.Config{Toolsets: []agent.Toolset{agent.NewToolset("tools")}})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	g, err := gateway.New(ctx, srv, gateway.Config{})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	hs := httptest.NewServer(g.Handler())
	defer hs.Close()

	resp, err := http.Get(hs.URL + "/readyz")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(resp.StatusCode, " ", string(body))
	// Output: 200 ready
}

// Replicas share a NATS server: each names itself, and sessions, retries
// and the audit stream go through NATS.
func Example_replicas() {
	ctx := context.Background()
	nc, err := nats.Connect("nats://nats.internal:4222")
	if err != nil {
		panic(err)
	}
	defer nc.Close()
	srv, err := server.New(ctx, server.Config{Toolsets: []agent.Toolset{agent.NewToolset("tools")}})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	g, err := gateway.New(ctx, srv, gateway.Config{Conn: nc, Replica: "gw-1", Audit: true})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	_ = http.ListenAndServe(":8080", g.Handler()) // on shutdown: g.Drain(), wait, then close
}
