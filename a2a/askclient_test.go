package a2a

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
)

// TestAskClient: with ServerConfig.AskClient a served run's question goes
// to the A2A client (an input-required turn) and not to the agent's own
// Elicitor; without it, the question goes to the agent's own Elicitor and
// the client is never asked.
func TestAskClient(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		askClient            bool
		clientAsked, ownAsks int64
		want                 string
	}{
		{"to the client", true, 1, 0, "city=Paris"},
		{"to the agent's own elicitor", false, 0, 1, "city=Lisbon"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var own, client atomic.Int64
			ownEl := agent.ElicitorFunc(func(context.Context, agent.Elicitation) (agent.ElicitationResult, error) {
				own.Add(1)
				return agent.ElicitationResult{Action: agent.ElicitAccept, Content: map[string]any{"text": "Lisbon"}}, nil
			})
			_, hs := newWorkerAsking(t, ServerConfig{AskClient: tc.askClient}, ownEl)
			ctx := ctxT(t)
			ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "w", URL: hs.URL}}})
			if err != nil {
				t.Fatal(err)
			}
			defer ts.Close()
			ag := delegator(t, ts, agent.ElicitorFunc(func(context.Context, agent.Elicitation) (agent.ElicitationResult, error) {
				client.Add(1)
				return agent.ElicitationResult{Action: agent.ElicitAccept, Content: map[string]any{"text": "Paris"}}, nil
			}))
			ans, err := ag.Run(ctx, "ask weather")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(ans.Text, tc.want) || client.Load() != tc.clientAsked || own.Load() != tc.ownAsks {
				t.Fatalf("answer %q; client asked %d times, own elicitor %d (want %d, %d)", ans.Text, client.Load(), own.Load(), tc.clientAsked, tc.ownAsks)
			}
		})
	}
}
