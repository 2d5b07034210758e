package a2a

import (
	"context"
	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// delegator is an agent that sends its input to the peer tool, then
// answers with the tool's result.
func delegator(t *testing.T, ts *Toolset, el agent.Elicitor, steps ...llm.Step) *agent.Agent {
	t.Helper()
	if len(steps) == 0 {
		steps = []llm.Step{llm.React(func(req *llm.Request) llm.Step {
			if res := testkit.LastToolResults(req); len(res) > 0 {
				return llm.Say("got: " + res[0].Content)
			}
			return llm.Calls(llm.CallTool("d1", "a2a__w", map[string]string{"message": lastUser(req)}))
		})}
	}
	ag, err := agent.New(context.Background(), agent.Config{Model: llm.NewCyclic(steps...), Toolsets: []agent.Toolset{ts},
		Permissions: agent.AllowAll(), Elicitor: el})
	if err != nil {
		t.Fatal(err)
	}
	return ag
}

// TestInputAndAuthRequired: input-required and auth-required from the peer
// become elicitations of the matching kind; the answers continue the task
// (AUTH-INTASK-001/002/003).
func TestInputAndAuthRequired_AUTH_INTASK_001_002_003(t *testing.T) {
	_, hs := newWorker(t, ServerConfig{})
	ctx := ctxT(t)
	ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "w", URL: hs.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	var mu sync.Mutex
	var asked []agent.Elicitation
	el := agent.ElicitorFunc(func(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
		mu.Lock()
		asked = append(asked, e)
		mu.Unlock()
		return agent.ElicitationResult{Action: agent.ElicitAccept, Content: map[string]any{"text": "Paris"}}, nil
	})
	ag := delegator(t, ts, el)
	tests := []struct {
		in, want string
		kind     agent.ElicitationKind
		question string
	}{
		{"ask weather", "city=Paris", agent.ElicitInput, "Which city for weather?"},
		{"login now", "signed in with Paris", agent.ElicitAuth, "Sign in to the calendar service."},
	}
	for _, tc := range tests {
		mu.Lock()
		asked = nil
		mu.Unlock()
		ans, err := ag.Run(ctx, tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(ans.Text, tc.want) {
			t.Fatalf("%s: %q", tc.in, ans.Text)
		}
		mu.Lock()
		if len(asked) != 1 || asked[0].Kind != tc.kind || asked[0].Message != tc.question ||
			asked[0].Source.Kind != failure.SourceA2A || asked[0].Source.Name != "w" || asked[0].Run == "" {
			t.Fatalf("%s: questions %+v", tc.in, asked)
		}
		mu.Unlock()
	}
}

// TestAskModel: with AskModel the question goes back to the model, which
// answers it by calling the tool again with the task id.
func TestAskModel(t *testing.T) {
	_, hs := newWorker(t, ServerConfig{})
	ctx := ctxT(t)
	ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "w", URL: hs.URL}}, AskModel: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	var taskID string
	ag := delegator(t, ts, nil,
		llm.Calls(llm.CallTool("d1", "a2a__w", map[string]string{"message": "ask weather"})),
		llm.React(func(req *llm.Request) llm.Step {
			res := testkit.LastToolResults(req)[0].Content
			if !strings.Contains(res, "Which city for weather?") {
				return llm.Say("no question: " + res)
			}
			_, rest, _ := strings.Cut(res, `"task_id": "`)
			taskID, _, _ = strings.Cut(rest, `"`)
			return llm.Calls(llm.CallTool("d2", "a2a__w", map[string]string{"message": "Oslo", "task_id": taskID}))
		}),
		llm.React(func(req *llm.Request) llm.Step { return llm.Say("final: " + testkit.LastToolResults(req)[0].Content) }),
	)
	ans, err := ag.Run(ctx, "go")
	if err != nil {
		t.Fatal(err)
	}
	if taskID == "" || !strings.Contains(ans.Text, "city=Oslo") || !strings.Contains(ans.Text, taskID) {
		t.Fatalf("answer %q (task %q)", ans.Text, taskID)
	}
}

// TestOutOfBandAnswer covers AUTH-INTASK-004: credentials delivered out of
// band (Server.Answer) resume a task in auth-required, and the streaming
// client sees it complete.
func TestOutOfBandAnswer_AUTH_INTASK_004_005(t *testing.T) {
	srv, hs := newWorker(t, ServerConfig{})
	ctx := ctxT(t)
	c := clientFor(t, hs.URL, "JSONRPC", nil)
	var states []string
	for ev, err := range c.SendStreamingMessage(ctx, textMsg("login please")) {
		if err != nil {
			t.Fatal(err)
		}
		st, ok := ev.(*a2ago.TaskStatusUpdateEvent)
		if !ok {
			continue
		}
		states = append(states, string(st.Status.State))
		if st.Status.State == a2ago.TaskStateAuthRequired {
			// The stream stays open (AUTH-INTASK-005); answer out of band.
			if !srv.Answer(string(st.TaskID), agent.ElicitationResult{Action: agent.ElicitAccept, Content: map[string]any{"text": "oauth-code"}}) {
				t.Fatal("no run waiting")
			}
		}
	}
	got := strings.Join(states, ",")
	if !strings.Contains(got, "TASK_STATE_AUTH_REQUIRED,TASK_STATE_WORKING") || !strings.HasSuffix(got, "TASK_STATE_COMPLETED") {
		t.Fatalf("states = %s", got)
	}
	if srv.Answer("no-such-task", agent.ElicitationResult{}) {
		t.Fatal("answered a task nobody waits on")
	}
}
