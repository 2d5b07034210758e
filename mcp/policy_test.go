package mcp

import (
	"bytes"
	"context"
	"encoding/json"

	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestManagerPolicy: a manager configured without a Policy uses the process
// default at each use (also one set after New, and whatever an agent it is
// given to uses); a Config.Policy is kept.
func TestManagerPolicy(t *testing.T) {
	t.Cleanup(func() { failure.SetDefault(nil) })
	own, def, agents := failure.NewPolicy(failure.PolicyConfig{}), failure.NewPolicy(failure.PolicyConfig{}), failure.NewPolicy(failure.PolicyConfig{})
	tests := []struct {
		name string
		cfg  failure.Policy
		want failure.Policy
	}{
		{name: "the default", want: def},
		{name: "configured policy kept", cfg: own, want: own},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failure.SetDefault(nil)
			m := newManager(t, Config{Policy: tt.cfg})
			failure.SetDefault(def)
			if _, err := agent.New(context.Background(), agent.Config{Model: llm.NewScripted(), Policy: agents,
				Toolsets: []agent.Toolset{m.Toolset()}}); err != nil {
				t.Fatal(err)
			}
			if got := m.pol(); got != tt.want {
				t.Errorf("policy %p, want %p", got, tt.want)
			}
		})
	}
}

// TestManagerPolicyConcurrent replaces the default while calls and
// reconnects use it (run with -race): each use takes the default of its
// moment, and the manager ends with the last one.
func TestManagerPolicyConcurrent(t *testing.T) {
	t.Cleanup(func() { failure.SetDefault(nil) })
	m := newManager(t, Config{Servers: []ServerConfig{inProcessServer(t, "s")}})
	ctx := context.Background()
	pols := make([]failure.Policy, 8)
	for i := range pols {
		pols[i] = failure.NewPolicy(failure.PolicyConfig{})
	}
	var wg sync.WaitGroup
	for i := range pols {
		wg.Go(func() { failure.SetDefault(pols[i]) })
		wg.Go(func() {
			if _, err := m.CallTool(ctx, "s", "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	last := failure.NewPolicy(failure.PolicyConfig{})
	failure.SetDefault(last)
	if m.pol() != last {
		t.Fatal("the manager does not follow the default")
	}
}

func inProcessServer(t *testing.T, name string) ServerConfig {
	t.Helper()
	return ServerConfig{Name: name, Server: echoServer()}
}

// echoServer has a read-only echo tool and one resource.
func echoServer() *gomcp.Server {
	srv := gomcp.NewServer(&gomcp.Implementation{Name: "echo", Version: "1"}, nil)
	gomcp.AddTool(srv, &gomcp.Tool{Name: "echo", Annotations: &gomcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *gomcp.CallToolRequest, a echoArgs) (*gomcp.CallToolResult, any, error) {
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: a.Text}}}, nil, nil
		})
	srv.AddResource(&gomcp.Resource{URI: "test://r", Name: "r"}, func(context.Context, *gomcp.ReadResourceRequest) (*gomcp.ReadResourceResult, error) {
		return &gomcp.ReadResourceResult{Contents: []*gomcp.ResourceContents{{URI: "test://r", Text: "r"}}}, nil
	})
	return srv
}

// flakyHTTP serves echoServer over Streamable HTTP and answers 503 to the
// first fails[text] tools/call requests with that text argument (-1:
// all), and to every resources/read. It counts the requests by method and
// text.
type flakyHTTP struct {
	fails map[string]int
	mu    sync.Mutex
	seen  map[string]int
}

func (f *flakyHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request, next http.Handler) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Arguments echoArgs `json:"arguments"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &msg)
	key := msg.Method
	if msg.Method == "tools/call" {
		key += " " + msg.Params.Arguments.Text
	}
	f.mu.Lock()
	f.seen[key]++
	n := f.seen[key]
	limit, ok := f.fails[key]
	f.mu.Unlock()
	if ok && (limit < 0 || n <= limit) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	next.ServeHTTP(w, r)
}

func (f *flakyHTTP) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen[key]
}

// TestOnePolicyForAgentAndManager runs an agent over a manager, both
// created without a Policy: under the process default, its one OnFailure
// sees every failure once (a call's failure from the agent,
// a background reconnect failure from the manager), and a transient
// failure is retried by one Execute, not by two nested ones.
func TestOnePolicyForAgentAndManager(t *testing.T) {
	flaky := &flakyHTTP{seen: map[string]int{},
		fails: map[string]int{"tools/call recover": 2, "tools/call fail": -1, "resources/read": -1}}
	srv := echoServer()
	h := gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { flaky.ServeHTTP(w, r, h) }))
	defer hs.Close()
	var dials atomic.Int32
	down := ServerConfig{Name: "down", NewTransport: func(context.Context) (gomcp.Transport, error) {
		dials.Add(1)
		return nil, fmt.Errorf("dialling the test server: %w", syscall.ECONNREFUSED)
	}}

	var mu sync.Mutex
	var failures []*failure.Error
	var retries int
	pol := testkit.SetDefault(t, failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
		BreakerFailures: 1000,
		OnFailure: func(_ context.Context, o failure.Outcome) {
			mu.Lock()
			defer mu.Unlock()
			failures = append(failures, o.Err)
		},
		OnRetry: func(context.Context, failure.Key, error, time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			retries++
		}}))
	m := newManager(t, Config{Servers: []ServerConfig{{Name: "flaky", URL: hs.URL}, down},
		RestartBackoff: 10 * time.Millisecond, MaxRestartBackoff: 20 * time.Millisecond, MaxRestarts: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.WaitReady(ctx, "flaky"); err != nil {
		t.Fatal(err)
	}
	model := llm.NewScripted(
		llm.Calls(llm.CallTool("c1", "mcp__flaky__echo", map[string]any{"text": "recover"})),
		llm.Calls(llm.CallTool("c2", "mcp__flaky__echo", map[string]any{"text": "fail"})),
		llm.Calls(llm.CallTool("c3", nameReadResource, map[string]any{"server": "flaky", "uri": "test://r"})),
		llm.SummarizeResults("done"),
	)
	a, err := agent.New(ctx, agent.Config{Model: model, Toolsets: []agent.Toolset{m.Toolset()}})
	if err != nil {
		t.Fatal(err)
	}
	if m.pol() != pol {
		t.Fatal("the manager does not use the process default")
	}
	if _, err := a.Run(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	// The background reconnects of "down" fail under the default.
	downSeen := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, fe := range failures {
			if fe.Name == "down" && fe.Op == "connect" {
				n++
			}
		}
		return n
	}
	testkit.WaitFor(t, 20*time.Second, "a failed background reconnect of down", func() bool { return downSeen() > 0 })
	_ = m.Close()

	requests := []struct {
		key  string
		want int
	}{
		{"tools/call recover", 3}, // two 503s, then the answer: retried by one Execute
		{"tools/call fail", 3},    // MaxAttempts, not MaxAttempts²
		{"resources/read", 3},     // through the manager's nested Execute
	}
	for _, r := range requests {
		if got := flaky.count(r.key); got != r.want {
			t.Errorf("%s: the server received %d requests, want %d", r.key, got, r.want)
		}
	}
	nDown := downSeen()
	mu.Lock()
	defer mu.Unlock()
	byTool := map[string]int{}
	for _, fe := range failures {
		if fe.Name == "down" {
			if fe.Source != failure.SourceMCP || fe.Op != "connect" {
				t.Errorf("background failure %v (op %q), want a connect failure of source mcp", fe, fe.Op)
			}
			continue
		}
		byTool[fe.Tool]++
		if fe.Kind != failure.Transient {
			t.Errorf("failure %v is %s, want transient", fe, fe.Kind)
		}
	}
	if want := map[string]int{"mcp__flaky__echo": 1, nameReadResource: 1}; fmt.Sprint(byTool) != fmt.Sprint(want) {
		t.Errorf("OnFailure saw the calls' failures %v, want each once: %v", byTool, want)
	}
	if nDown == 0 {
		t.Error("no background reconnect failure reached the agent's OnFailure")
	}
	// 2 retries each for c1, c2 and c3, plus those of the reconnects.
	if retries < 6 {
		t.Errorf("%d retries, want at least 6", retries)
	}
	if dials.Load() == 0 {
		t.Error("the down server was never dialled")
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
