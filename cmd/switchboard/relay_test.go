package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/bus"
)

// TestReplicasRelay: two stateless gateway processes sharing a NATS server
// behind a round-robin balancer without affinity. Every echo asks the
// client's permission (-ask), so each call takes two requests (the
// input-required answer, the retry) that land on different replicas; the
// retry is relayed over NATS to the replica holding the call, and every
// call completes.
func TestReplicasRelay(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two gateways")
	}
	b, err := bus.New(context.Background(), bus.Config{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var backends []*httputil.ReverseProxy
	for _, name := range []string{"g0", "g1"} {
		u, err := url.Parse(startHTTP(t, gatewayEnv(t), append(gatewayArgs, "-stateless", "-nats", b.ClientURL(),
			"-replica", name, "-ask", "mcp__everything__echo")...))
		if err != nil {
			t.Fatal(err)
		}
		u.Path = ""
		backends = append(backends, httputil.NewSingleHostReverseProxy(u))
	}
	var n atomic.Int32
	lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.URL.Path = "/mcp"
		backends[n.Add(1)%2].ServeHTTP(w, r)
	}))
	defer lb.Close()
	var asked atomic.Int32
	c := gomcp.NewClient(&gomcp.Implementation{Name: "lb-client", Version: "1"}, &gomcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
			asked.Add(1)
			return &gomcp.ElicitResult{Action: "accept"}, nil
		}})
	cs, err := c.Connect(ctx(t, 30*time.Second), &gomcp.StreamableClientTransport{Endpoint: lb.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := range 4 {
		res, err := cs.CallTool(ctx(t, 30*time.Second), &gomcp.CallToolParams{Name: "mcp__everything__echo", Arguments: map[string]any{"message": "lb"}})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*gomcp.TextContent).Text
		if res.IsError || !strings.Contains(text, "lb") {
			t.Errorf("call %d: %q (error %v)", i, text, res.IsError)
		}
	}
	if asked.Load() != 4 {
		t.Errorf("the client was asked %d times, want 4", asked.Load())
	}
	t.Logf("4 asked calls through 2 replicas without affinity: %d HTTP requests balanced, %d questions answered", n.Load(), asked.Load())
}
