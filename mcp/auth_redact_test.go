package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/internal/testkit/authserver"
	"github.com/switchboard-dev/switchboard/llm"
)

// syncBuf is a log sink safe for concurrent writers.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAuthRedaction: no token (access, refresh) or client secret appears
// in the logs (debug level), the run's events or anything the model is
// sent, through a login, a call, and a failed step-up whose error reaches
// the model.
func TestAuthRedaction(t *testing.T) {
	as := protected(t, authserver.Options{})
	var logs syncBuf
	log := zerolog.New(&logs).Level(zerolog.DebugLevel)
	b, store := &browser{}, &mapStore{}
	cfg := authConfig(as, &Auth{ClientID: authserver.PublicClient}, b, store)
	cfg.Logger = &log
	m := newManager(t, cfg)
	t.Cleanup(func() { as.Require("read") }) // before m.Close: its DELETE must pass

	var mu sync.Mutex
	var seen []string // what the model was sent, and the events
	record := func(v any) {
		data, _ := json.Marshal(v)
		mu.Lock()
		seen = append(seen, string(data))
		mu.Unlock()
	}
	model := llm.NewScripted(
		llm.Calls(llm.CallTool("c1", "mcp__api__echo", map[string]any{"text": "one"})),
		llm.React(func(req *llm.Request) llm.Step {
			record(req.Messages)
			as.Require("read", "admin") // a scope the client may not have
			return llm.Calls(llm.CallTool("c2", "mcp__api__echo", map[string]any{"text": "two"}))
		}),
		llm.React(func(req *llm.Request) llm.Step {
			record(req.Messages)
			return llm.Say("done")
		}),
	)
	a, err := agent.New(context.Background(), agent.Config{Model: model, Toolsets: []agent.Toolset{m.Toolset()},
		Events: testkit.EventSinkFunc(func(_ context.Context, ev agent.Event) { record(ev) }), Logger: &log})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(testkit.Ctx(t, 30*time.Second), "go"); err != nil {
		t.Fatal(err)
	}
	secrets := as.Bearers()
	secrets = append(secrets, store.refreshToken(t, "api.u"))
	if len(secrets) < 2 {
		t.Fatalf("secrets %d: the login did not happen", len(secrets))
	}
	mu.Lock()
	all := strings.Join(seen, "\n") + logs.String()
	mu.Unlock()
	if !strings.Contains(all, "scope") {
		t.Fatalf("the failed step-up did not reach the model or the logs:\n%s", all)
	}
	for _, s := range secrets {
		if strings.Contains(all, s) {
			t.Errorf("a token appears in the logs, events or model input")
		}
	}
}
