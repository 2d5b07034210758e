package a2a

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// redactGuard redacts the word "secret".
type redactGuard struct{}

func (redactGuard) Name() string { return "redact" }

func (redactGuard) Check(_ context.Context, c agent.GuardCheck) (agent.Verdict, error) {
	if strings.Contains(c.Text, "secret") {
		return agent.Rewrite(strings.ReplaceAll(c.Text, "secret", "[x]"), "redacted"), nil
	}
	return agent.Pass(), nil
}

// TestServedAgentKeepsGuards: an agent served over A2A runs its output
// guard: the task's artifact is the redacted answer.
func TestServedAgentKeepsGuards(t *testing.T) {
	ctx := context.Background()
	ag, err := agent.New(ctx, agent.Config{Name: "teller", Description: "Tells.",
		Model:  llm.NewScripted(llm.Say("the secret is 42")),
		Guards: []agent.GuardRule{{Guard: redactGuard{}, At: agent.GuardOutput}}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(ctx, ServerConfig{Agent: ag})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close(); _ = srv.Close() })
	c := clientFor(t, hs.URL, bindings[0], nil)
	res, err := c.SendMessage(ctxT(t), textMsg("tell"))
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2ago.Task)
	if !ok || task.Status.State != a2ago.TaskStateCompleted {
		t.Fatalf("result = %#v", res)
	}
	if got := artifactText(task); !strings.Contains(got, "the [x] is 42") || strings.Contains(got, "secret") {
		t.Errorf("artifact %q, want the redacted answer", got)
	}
}
