package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/mcp/gateway"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// TestAuditStream: every call through the gateway, refused ones too, is
// one record on the JetStream audit stream of the NATS server given with
// -nats; the per-client rate limit refuses past the burst.
func TestAuditStream(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node processes")
	}
	b, err := bus.New(context.Background(), bus.Config{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	url := startHTTP(t, gatewayEnv(t), append(gatewayArgs, "-audit", "-nats", b.ClientURL(), "-rate", "0.001", "-burst", "3")...)
	c := gomcp.NewClient(&gomcp.Implementation{Name: "audit-client", Version: "1"}, nil)
	cs, err := c.Connect(ctx(t, 30*time.Second), &gomcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ok", "ok", "ok", "rate_limited"}
	for i := range want {
		res, err := cs.CallTool(ctx(t, 30*time.Second), &gomcp.CallToolParams{Name: "mcp__everything__echo", Arguments: map[string]any{"message": "a"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError != (want[i] != "ok") {
			t.Errorf("call %d: error %v, want outcome %s", i, res.IsError, want[i])
		}
	}
	cs.Close()

	js := b.JetStream()
	var got []server.AuditRecord
	testkit.WaitFor(t, 20*time.Second, fmt.Sprintf("%d audit records", len(want)), func() bool {
		got = got[:0]
		cons, err := js.OrderedConsumer(ctx(t, 5*time.Second), gateway.AuditStream, jetstream.OrderedConsumerConfig{})
		if err != nil {
			return false
		}
		batch, err := cons.FetchNoWait(100)
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			var r server.AuditRecord
			if err := json.Unmarshal(m.Data(), &r); err != nil {
				t.Fatalf("audit record %s: %v", m.Data(), err)
			}
			if m.Subject() != "switchboard.audit.mcp__everything__echo" {
				t.Errorf("subject %s", m.Subject())
			}
			got = append(got, r)
		}
		return len(got) >= len(want)
	})
	if len(got) != len(want) {
		t.Fatalf("%d audit records, want %d: %+v", len(got), len(want), got)
	}
	for i, r := range got {
		if r.Outcome != want[i] || r.Tool != "mcp__everything__echo" || r.Source != "mcp:everything:echo" || r.Client == "" {
			t.Errorf("record %d: %+v, want outcome %s", i, r, want[i])
		}
	}
}
