package agent_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// swapToolset lists one of two tool lists; swap switches between them.
type swapToolset struct {
	lists [2][]agent.Tool
	cur   atomic.Int32
}

func (s *swapToolset) Name() string { return "swap" }
func (s *swapToolset) Tools(context.Context) ([]agent.Tool, error) {
	return s.lists[s.cur.Load()], nil
}

// TestToolIndexFollowsListings: the index built from a listing is reused
// while the toolset returns the same slice, by concurrent runs too, and
// rebuilt as soon as it returns another one.
func TestToolIndexFollowsListings(t *testing.T) {
	ts := &swapToolset{lists: [2][]agent.Tool{{echoTool("one", nil)}, {echoTool("two", nil)}}}
	seen := func(req *llm.Request) string {
		names := ""
		for _, d := range req.Tools {
			names += d.Name
		}
		return names
	}
	var mu sync.Mutex
	var got []string
	model := llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		mu.Lock()
		got = append(got, seen(req))
		mu.Unlock()
		return llm.Say("ok")
	}))
	a := newAgent(t, agent.Config{Name: "a", Model: model, Toolsets: []agent.Toolset{ts}})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := a.Run(context.Background(), "go"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	ts.cur.Store(1)
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	for i, g := range got[:8] {
		if g != "one" {
			t.Fatalf("run %d saw %q", i, g)
		}
	}
	if got[8] != "two" {
		t.Fatalf("after the list changed the model saw %q, want two", got[8])
	}
}
