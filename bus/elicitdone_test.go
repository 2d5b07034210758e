package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
)

// TestElicitationDone: the bus's Elicitor announces the end of a URL-mode
// elicitation on its run's subject, and a subscriber of every run gets it.
func TestElicitationDone(t *testing.T) {
	b := newBus(t, bus.Config{})
	cases := []struct {
		name, follow, run string
	}{
		{"one run", "run_1", "run_1"},
		{"every run", "*", "run_2"},
		{"no run", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sub, err := b.SubscribeElicitationDone(tc.follow)
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			if err := b.Flush(ctxT(t, 5*time.Second)); err != nil {
				t.Fatal(err)
			}
			c, ok := b.Elicitor().(interface {
				ElicitationComplete(context.Context, agent.Elicitation)
			})
			if !ok {
				t.Fatal("the bus's Elicitor has no ElicitationComplete method")
			}
			c.ElicitationComplete(context.Background(), agent.Elicitation{Kind: agent.ElicitURL, ID: "el-7", Run: tc.run,
				Source: agent.Provenance{Kind: failure.SourceMCP, Name: "github"}})
			got, err := sub.Next(ctxT(t, 5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != "el-7" || got.Run != tc.run || got.Source.Name != "github" || got.Time.IsZero() {
				t.Fatalf("got %+v", got)
			}
		})
	}
}
