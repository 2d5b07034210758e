package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// The probes' paths (package gateway serves them).
const (
	livePath  = "/healthz"
	readyPath = "/readyz"
)

// probe is a GET of the gateway's path p: its status and body.
func probe(t *testing.T, base, p string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx(t, 5*time.Second), http.MethodGet, base+p, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestHealthProbes: /healthz answers while the gateway serves; /readyz
// while it should get new requests: 503 naming NATS once the NATS server
// replicas share is gone, and 503 "shutting down" through -shutdown-delay
// after SIGTERM, while /healthz and an open session's calls still work;
// the process then exits.
func TestHealthProbes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts gateways and node processes")
	}
	env := gatewayEnv(t)
	t.Run("NATS", func(t *testing.T) {
		b, err := bus.New(context.Background(), bus.Config{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		g := startGateway(t, "h0", env, append(countArgs, "-nats", b.ClientURL())...)
		base := strings.TrimSuffix(g.url, "/mcp")
		for _, p := range []string{livePath, readyPath} {
			if code, body := probe(t, base, p); code != http.StatusOK {
				t.Fatalf("%s: %d %q, want 200", p, code, body)
			}
		}
		if err := b.Close(); err != nil { // the NATS server goes away
			t.Fatal(err)
		}
		testkit.WaitFor(t, 10*time.Second, "/readyz to name NATS", func() bool {
			code, body := probe(t, base, readyPath)
			return code == http.StatusServiceUnavailable && strings.Contains(body, "NATS")
		})
		if code, _ := probe(t, base, livePath); code != http.StatusOK {
			t.Errorf("/healthz without NATS: %d, want 200 (the process serves)", code)
		}
	})
	t.Run("shutdown delay", func(t *testing.T) {
		g := startGateway(t, "h1", env, append(countArgs, "-shutdown-delay", "3s")...)
		base := strings.TrimSuffix(g.url, "/mcp")
		cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "probe", Version: "1"}, nil).
			Connect(ctx(t, 30*time.Second), &gomcp.StreamableClientTransport{Endpoint: g.url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		testkit.WaitFor(t, 10*time.Second, "/readyz to say it is shutting down", func() bool {
			code, body := probe(t, base, readyPath)
			return code == http.StatusServiceUnavailable && body == "shutting down"
		})
		if code, _ := probe(t, base, livePath); code != http.StatusOK {
			t.Errorf("/healthz while draining: %d, want 200", code)
		}
		ep := endpoint{cs: cs, tool: "mcp__count__echo"}
		ep.call(t) // an open session is still served
		select {
		case <-g.done:
		case <-time.After(20 * time.Second):
			t.Fatal("the gateway did not exit after its shutdown delay")
		}
		if d := time.Since(start); d < 2*time.Second {
			t.Errorf("the gateway exited %v after SIGTERM, before its 3 s delay", d)
		}
	})
}
