package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

func TestMain(m *testing.M) {
	if kind := os.Getenv(benchServerEnv); kind != "" { // a benchmark's server process
		if err := serveBench(kind); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m,
		// net/http keeps idle client connections' goroutines briefly.
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

// workerModel is agent B's deterministic model: "research X" calls the
// research tool, "ask X" calls the ask tool, "slow X" calls the slow tool,
// anything else is echoed; after tool results it answers with them.
func workerModel() *llm.Scripted {
	return llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		if res := testkit.LastToolResults(req); len(res) > 0 {
			var parts []string
			for _, r := range res {
				c := r.Content
				if i := strings.IndexByte(c, '\n'); i >= 0 {
					c = c[i+1:]
				}
				parts = append(parts, strings.TrimSuffix(c, "\n</tool_result>"))
			}
			return llm.Say("done: " + strings.Join(parts, "; "))
		}
		in := lastUser(req)
		word, rest, _ := strings.Cut(in, " ")
		switch word {
		case "research", "ask", "slow", "login":
			return llm.Calls(llm.CallTool("c1", word, map[string]any{"topic": rest}))
		}
		return llm.Say("echo: " + in)
	}))
}

type topicArgs struct {
	Topic string `json:"topic"`
}

var topicSchema = json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"}}}`)

// workerTools are agent B's tools: research reports progress twice, ask
// asks the client a question, slow waits for cancellation.
func workerTools() []agent.Tool {
	research := agent.NewFuncTool(agent.ToolSpec{Name: "research", Description: "Researches a topic.", InputSchema: topicSchema},
		func(ctx context.Context, raw json.RawMessage) (*agent.Result, error) {
			var a topicArgs
			_ = json.Unmarshal(raw, &a)
			call, _ := agent.CallFromContext(ctx)
			call.ReportProgress(agent.Progress{Progress: 1, Total: 2, Message: "reading sources on " + a.Topic})
			call.ReportProgress(agent.Progress{Progress: 2, Total: 2, Message: "writing notes"})
			return agent.TextResult("notes on " + a.Topic), nil
		})
	ask := agent.NewFuncTool(agent.ToolSpec{Name: "ask", Description: "Asks the user.", InputSchema: topicSchema},
		func(ctx context.Context, raw json.RawMessage) (*agent.Result, error) {
			var a topicArgs
			_ = json.Unmarshal(raw, &a)
			call, _ := agent.CallFromContext(ctx)
			ans, err := call.Elicit(ctx, agent.Elicitation{Kind: agent.ElicitInput, Message: "Which city for " + a.Topic + "?"})
			if err != nil {
				return nil, err
			}
			if ans.Action != agent.ElicitAccept {
				return agent.ErrorResult("the user declined"), nil
			}
			return agent.TextResult(fmt.Sprintf("city=%v", ans.Content["text"])), nil
		})
	slow := agent.NewFuncTool(agent.ToolSpec{Name: "slow", Description: "Works until cancelled.", InputSchema: topicSchema},
		func(ctx context.Context, raw json.RawMessage) (*agent.Result, error) {
			call, _ := agent.CallFromContext(ctx)
			call.ReportProgress(agent.Progress{Message: "started"})
			<-ctx.Done()
			return nil, ctx.Err()
		})
	login := agent.NewFuncTool(agent.ToolSpec{Name: "login", Description: "Needs credentials.", InputSchema: topicSchema},
		func(ctx context.Context, raw json.RawMessage) (*agent.Result, error) {
			call, _ := agent.CallFromContext(ctx)
			ans, err := call.Elicit(ctx, agent.Elicitation{Kind: agent.ElicitAuth, Message: "Sign in to the calendar service."})
			if err != nil {
				return nil, err
			}
			if ans.Action != agent.ElicitAccept {
				return agent.ErrorResult("not signed in"), nil
			}
			return agent.TextResult(fmt.Sprintf("signed in with %v", ans.Content["text"])), nil
		})
	return []agent.Tool{research, ask, slow, login}
}

// newWorker returns agent B served by a Server over httptest.
func newWorker(t testing.TB, cfg ServerConfig) (*Server, *httptest.Server) {
	t.Helper()
	ctx := context.Background()
	ag, err := agent.New(ctx, agent.Config{Name: "worker", Description: "Researches and asks questions.",
		Model: workerModel(), Tools: workerTools(), Permissions: agent.AllowAll(), Elicitor: TaskElicitor(nil),
		ToolTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Agent = ag
	srv, err := NewServer(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		_ = srv.Close()
	})
	return srv, hs
}

// npmDir is where `make test` installs the npm peers.
var npmDir = filepath.Join("..", "internal", "npm")

func needNode(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(npmDir, "node_modules", "@a2a-js", "sdk")); err != nil {
		t.Skip("npm peers not installed: run `make test` or `npm ci --prefix internal/npm`")
	}
}

// newHookServer is a webhook receiver for push notifications.
func newHookServer(t testing.TB, got func(body, token string)) string {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got(string(b), r.Header.Get("A2A-Notification-Token"))
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/hook"
}

var lastUser = testkit.LastUser

// ctxT is a test's context, bounded by 60s.
func ctxT(t testing.TB) context.Context { return testkit.Ctx(t, 60*time.Second) }

// slowTask starts a task that runs until cancelled.
func slowTask(t *testing.T, ctx context.Context, c *a2aclient.Client) a2ago.TaskID {
	t.Helper()
	m := textMsg("slow matrix")
	m.Config = &a2ago.SendMessageConfig{ReturnImmediately: true}
	res, err := c.SendMessage(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2ago.Task)
	if !ok {
		t.Fatalf("answer %T", res)
	}
	return task.ID
}
