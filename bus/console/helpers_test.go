package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/console"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

func TestMain(m *testing.M) {
	code := m.Run()
	stopBrowser()
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"),
			goleak.IgnoreAnyFunction("internal/fuzz.(*contextReader).Read.func1")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// env is a console over a real embedded bus, with an agent that asks
// before it deletes a file.
type env struct {
	b   *bus.Bus
	a   *agent.Agent
	c   *console.Console
	srv *httptest.Server
	ctx context.Context
}

// deleteTool is a destructive tool: the default permissions ask first.
func deleteTool() agent.Tool {
	return agent.NewFuncTool(agent.ToolSpec{Name: "delete_file", Description: "Delete a file",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		func(_ context.Context, args json.RawMessage) (*agent.Result, error) {
			var a struct{ Path string }
			_ = json.Unmarshal(args, &a)
			return agent.TextResult("deleted " + a.Path), nil
		})
}

// scriptedModel answers "hello" directly, and calls delete_file when the
// input asks to delete.
func scriptedModel() llm.Model {
	return llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == llm.RoleTool {
			return llm.Say("done: " + last.ToolResults[0].Content)
		}
		if strings.Contains(last.Text, "research") {
			return llm.Calls(llm.CallTool("c1", "researcher", map[string]string{"input": "look it up"}))
		}
		if strings.Contains(last.Text, "delete") {
			return llm.Calls(llm.CallTool("c1", "delete_file", map[string]string{"path": "tmp/x"}))
		}
		return llm.Say("hello, you said " + last.Text)
	}))
}

func newEnv(t testing.TB, cfg console.Config) *env {
	t.Helper()
	ctx := testkit.Ctx(t, 60*time.Second)
	b := testkit.NewBus(t, bus.Config{})
	sub, err := agent.New(ctx, agent.Config{Name: "researcher", Description: "Looks things up", Model: llm.NewCyclic(llm.Say("found it")), Events: b})
	if err != nil {
		t.Fatal(err)
	}
	research, err := agent.AsTool(sub, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(ctx, agent.Config{Name: "helper", Model: scriptedModel(), Tools: []agent.Tool{deleteTool(), research},
		Events: b, Elicitor: b.Elicitor(), Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "researcher", Permission: agent.Allow}}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Bus = b
	if cfg.Runner == nil {
		cfg.Runner = a
	}
	c, err := console.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		if err := c.Close(); err != nil {
			t.Errorf("console Close: %v", err)
		}
	})
	return &env{b: b, a: a, c: c, srv: srv, ctx: ctx}
}

func (e *env) do(t testing.TB, method, path string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = strings.NewReader(string(data))
	}
	req, _ := http.NewRequestWithContext(e.ctx, method, e.srv.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Switchboard-Console", "1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, data)
		}
	}
	if res.StatusCode >= 300 {
		t.Logf("%s %s: %d %s", method, path, res.StatusCode, data)
	}
	return res.StatusCode
}

// sse reads a Server-Sent Events stream: each message's event name and
// data, until ctx is done or the stream ends.
type sseMsg struct {
	Event string
	Data  string
}

func (e *env) sse(t testing.TB, ctx context.Context, path string) <-chan sseMsg {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+path, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", path, res.StatusCode)
	}
	ch := make(chan sseMsg, 1024)
	go func() {
		defer close(ch)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var m sseMsg
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if m.Data != "" {
					select {
					case ch <- m:
					case <-ctx.Done():
						return
					}
				}
				m = sseMsg{}
			case strings.HasPrefix(line, "event: "):
				m.Event = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				m.Data = line[len("data: "):]
			}
		}
	}()
	return ch
}

// until reads ch until f accepts a message or the deadline passes.
func until(t testing.TB, ch <-chan sseMsg, d time.Duration, what string, f func(sseMsg) bool) sseMsg {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case m, ok := <-ch:
			if !ok {
				t.Fatalf("the stream ended before %s", what)
			}
			if f(m) {
				return m
			}
		case <-timer.C:
			t.Fatalf("no %s within %s", what, d)
		}
	}
}
