package agent_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// The stores of Durability are layered: Runs needs Sessions, Inbox needs
// Runs, ParkAfter needs an Inbox; anything else is a Config failure in New.
func TestDurabilityLayers(t *testing.T) {
	ctx := testkit.Ctx(t, 10*time.Second)
	st := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	for _, tc := range []struct {
		name string
		d    agent.Durability
		ok   bool
	}{
		{"none", agent.Durability{}, true},
		{"sessions", agent.Durability{Sessions: st}, true},
		{"sessions and runs", agent.Durability{Sessions: st, Runs: st}, true},
		{"all", agent.Durable(st, -1), true},
		{"runs without sessions", agent.Durability{Runs: st}, false},
		{"inbox without runs", agent.Durability{Sessions: st, Inbox: st}, false},
		{"parking without an inbox", agent.Durability{Sessions: st, Runs: st, ParkAfter: time.Second}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := agent.New(ctx, agent.Config{Name: "a", Model: &planModel{final: "ok"}, Durable: tc.d})
			if tc.ok != (err == nil) || err != nil && !errors.Is(err, failure.Config) {
				t.Fatalf("New: %v (want ok %v, else a Config failure)", err, tc.ok)
			}
		})
	}
}

// sessionsOnly is a SessionStore and nothing else: an agent given it keeps
// its conversations and needs no other concern.
type sessionsOnly struct{ agent.SessionStore }

// With Sessions alone, a conversation is continued by another agent: each
// run appends its messages to the stored session at its end; a run is not
// resumable (there is no run store) and a session changed by another run
// meanwhile gets a Conflict.
func TestSessionsOnly(t *testing.T) {
	ctx := testkit.Ctx(t, 10*time.Second)
	st := sessionsOnly{agent.NewMemoryStore(agent.MemoryStoreOptions{})}
	newAgent := func(final string) *agent.Agent {
		a, err := agent.New(ctx, agent.Config{Name: "a", Model: &planModel{final: final}, Durable: agent.Durability{Sessions: st}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	s1, err := newAgent("one").OpenSession(ctx, "chat")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s1.Run(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	a2 := newAgent("two")
	s2, err := a2.OpenSession(ctx, "chat")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Run(ctx, "second"); err != nil {
		t.Fatal(err)
	}
	rec, err := st.LoadSession(ctx, "chat")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range rec.History {
		texts = append(texts, m.Text)
	}
	if want := []string{"first", "one", "second", "two"}; len(texts) != 4 || texts[0] != want[0] || texts[1] != want[1] ||
		texts[2] != want[2] || texts[3] != want[3] {
		t.Fatalf("stored history %q, want %q", texts, want)
	}
	if _, err := a2.Resume(ctx, "run_x"); !errors.Is(err, failure.Config) {
		t.Fatalf("Resume without a run store: %v, want Config", err)
	}
	if _, err := a2.Inbox(ctx); !errors.Is(err, failure.Config) {
		t.Fatalf("Inbox without an inbox: %v, want Config", err)
	}

	// s1 read the session before s2's run: its next run reads it again at
	// its start, so nothing is lost.
	if _, err := s1.Run(ctx, "third"); err != nil {
		t.Fatal(err)
	}
	if rec, _ = st.LoadSession(ctx, "chat"); len(rec.History) != 6 {
		t.Fatalf("stored history has %d messages, want 6", len(rec.History))
	}

	// A run of another agent ends while this one runs: this run's end finds
	// the session changed and gets a Conflict; the other's messages stay.
	other, err := newAgent("other").OpenSession(ctx, "chat")
	if err != nil {
		t.Fatal(err)
	}
	m := &hookModel{Model: &planModel{final: "late"}, hook: func() {
		if _, err := other.Run(ctx, "meanwhile"); err != nil {
			t.Error(err)
		}
	}}
	a3, err := agent.New(ctx, agent.Config{Name: "a", Model: m, Durable: agent.Durability{Sessions: st}})
	if err != nil {
		t.Fatal(err)
	}
	s3, err := a3.OpenSession(ctx, "chat")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s3.Run(ctx, "racing"); !errors.Is(err, failure.Conflict) {
		t.Fatalf("a run whose session changed meanwhile: %v, want Conflict", err)
	}
	rec, _ = st.LoadSession(ctx, "chat")
	if n := len(rec.History); n != 8 || rec.History[6].Text != "meanwhile" {
		t.Fatalf("stored history has %d messages (the 7th %q), want 8 ending with the other run's", n, rec.History[min(6, n-1)].Text)
	}
}

// hookModel calls hook once, at its first turn, before answering.
type hookModel struct {
	llm.Model
	hook func()
	once sync.Once
}

func (m *hookModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	m.once.Do(m.hook)
	return m.Model.Generate(ctx, req)
}
