//go:build unix

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/mcp/internal/lineconn"
)

// headroom is what a loaded machine (scheduling, killing a process, the
// race detector) may add to a bound: a timeout under test is asserted as
// timeout+headroom, which stays below lineconn's 10 s write stall.
const headroom = 5 * time.Second

// within runs f and fails the test if it has not returned after limit.
func within[T any](t *testing.T, limit time.Duration, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(limit):
		t.Fatalf("%s did not return within %s", what, limit)
		panic("unreachable")
	}
}

// TestServerStopsReading: a stdio server that stops reading its input
// (issue 15, item 1). A call with 1 MiB of arguments fills the pipe; it
// must end with its timeout, the server be killed and restarted, a call
// made meanwhile end within its own timeout, later calls succeed, and
// Close return promptly.
//
// The bounds are the configured timeout plus headroom for a loaded
// machine: a write that ignores its timeout blocks for writeStall (10 s)
// or for good, past both.
func TestServerStopsReading(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	sc := testServer("deaf", "", map[string]string{"TESTSERVER_MARKER": marker})
	sc.Timeout = 2 * time.Second
	bound := sc.Timeout + headroom
	m, err := New(context.Background(), quickConfig(sc))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = m.Close()
		}
	})
	ctx := context.Background()
	if _, err := m.CallTool(ctx, "deaf", "deafen", nil); err != nil {
		t.Fatal(err)
	}
	big, _ := json.Marshal(map[string]string{"text": strings.Repeat("x", 1<<20)})
	s := m.servers[0]
	conn := func() *lineconn.Conn {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.conn
	}()
	if conn == nil {
		t.Fatal("the stdio server has no line connection")
	}

	t0 := time.Now()
	bigDone := make(chan error, 1)
	go func() {
		_, err := m.CallTool(ctx, "deaf", "echo", big)
		bigDone <- err
	}()
	// A small call while the big one is stuck in its write: it holds the
	// writer's turn until its timeout breaks the connection.
	testkit.WaitFor(t, bound, "the big call to hold the writer's turn", func() bool { return conn.Writing() || conn.Broken() })
	t1 := time.Now()
	_, small := m.CallTool(ctx, "deaf", "echo", json.RawMessage(`{"text":"meanwhile"}`))
	if d := time.Since(t1); d > bound {
		t.Errorf("the small call took %s, its timeout is %s", d, sc.Timeout)
	}
	if small != nil && !errors.Is(small, failure.Timeout) && !errors.Is(small, failure.Unavailable) {
		t.Fatalf("the small call: %v, want success, timeout or unavailable", small)
	}
	select {
	case err = <-bigDone:
	case <-time.After(3 * bound):
		t.Fatalf("the call with 1 MiB of arguments did not return within %s", 3*bound)
	}
	if took := time.Since(t0); took > bound {
		t.Errorf("the big call took %s, its timeout is %s", took, sc.Timeout)
	}
	if !errors.Is(err, failure.Timeout) {
		t.Fatalf("big call: err = %v, want kind timeout", err)
	}
	err = within(t, 30*time.Second, "a call after the restart", func() error {
		_, err := m.CallTool(ctx, "deaf", "echo", json.RawMessage(`{"text":"after"}`))
		return err
	})
	if err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	if st := m.Status()[0]; st.Connects < 2 {
		t.Errorf("connects = %d, want a restart", st.Connects)
	}
	t0 = time.Now()
	within(t, 5*time.Second+headroom, "Manager.Close", func() error { return m.Close() })
	closed = true
	t.Logf("Close took %s", time.Since(t0))
}

// TestLogFlood: a server floods log notifications faster than they are
// handled (issue 15, item 6). The heap stays bounded, the drops are
// logged, and Close is prompt.
func TestLogFlood(t *testing.T) {
	const n = 50_000 // about 25 MB of notifications
	var logs syncBuffer
	log := zerolog.New(&logs).Level(zerolog.WarnLevel)
	cfg := quickConfig(testServer("flood", "", nil))
	cfg.Logger = &log
	var handled atomic.Int64
	cfg.OnLog = func(context.Context, LogMessage) {
		handled.Add(1)
		time.Sleep(time.Millisecond) // a slow consumer
	}
	m, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = m.Close()
		}
	})
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	res, err := m.CallTool(context.Background(), "flood", "logflood", json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)))
	close(stop)
	<-sampled
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text(), fmt.Sprintf("sent %d", n)) {
		t.Fatalf("result %q", res.Text())
	}
	t0 := time.Now()
	within(t, 5*time.Second, "Manager.Close after the flood", func() error { return m.Close() })
	closed = true
	growth := int64(peak.Load()) - int64(base)
	t.Logf("%d notifications: %d handled, heap growth %d MB, Close %s", n, handled.Load(), growth>>20, time.Since(t0))
	if growth > 40<<20 {
		t.Errorf("heap grew by %d MB during the flood", growth>>20)
	}
	if h := handled.Load(); h >= n || h == 0 {
		t.Errorf("%d of %d notifications handled; want some, not all", h, n)
	}
	if !strings.Contains(logs.String(), "dropped some") {
		t.Errorf("no log line about the drops: %.500s", logs.String())
	}
}

// TestBrokenFrameMidCall: garbage on stdout, or a frame over the size
// bound, during a call (issue 15, item 10) fails the call with kind
// protocol, and the server is restarted for the next call.
func TestBrokenFrameMidCall(t *testing.T) {
	tests := []struct {
		tool, args string
	}{
		{"garbage", `{}`},
		{"oversize", fmt.Sprintf(`{"bytes":%d}`, 17<<20)},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			sc := testServer("broken", "", nil)
			sc.Timeout = 20 * time.Second
			m := newManager(t, quickConfig(sc))
			ctx := context.Background()
			err := within(t, 15*time.Second, "the call", func() error {
				_, err := m.CallTool(ctx, "broken", tt.tool, json.RawMessage(tt.args))
				return err
			})
			var fe *failure.Error
			if !errors.Is(err, failure.Protocol) || !errors.As(err, &fe) || fe.Name != "broken" {
				t.Fatalf("err = %v (%#v), want kind protocol from server broken", err, err)
			}
			if _, err := m.CallTool(ctx, "broken", "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
				t.Fatalf("after the restart: %v", err)
			}
		})
	}
}

// TestRunWithServerThatStopsReading: an agent run whose MCP tool call
// goes to a server that stopped reading ends within the agent's
// ToolTimeout (the Manager sets no timeout of its own), with the call's
// failure given to the model, and the next run's call succeeds on the
// restarted server.
func TestRunWithServerThatStopsReading(t *testing.T) {
	m := newManager(t, quickConfig(testServer("deaf", "", nil)))
	ctx := context.Background()
	if _, err := m.CallTool(ctx, "deaf", "deafen", nil); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 1<<20)
	model := llm.NewScripted(
		llm.Calls(llm.CallTool("c1", "mcp__deaf__echo", map[string]any{"text": big})),
		llm.SummarizeResults("done"),
		llm.Calls(llm.CallTool("c2", "mcp__deaf__echo", map[string]any{"text": "small"})),
		llm.SummarizeResults("done"),
	)
	const toolTimeout = 2 * time.Second
	a, err := agent.New(ctx, agent.Config{Model: model, Toolsets: []agent.Toolset{m.Toolset()}, ToolTimeout: toolTimeout,
		Elicitor: agent.ElicitorFunc(func(context.Context, agent.Elicitation) (agent.ElicitationResult, error) {
			return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	s := a.NewSession()
	t0 := time.Now()
	ans := within(t, 3*(toolTimeout+headroom), "Session.Run", func() *agent.Answer {
		ans, err := s.Run(ctx, "go")
		if err != nil {
			t.Errorf("run: %v", err)
		}
		return ans
	})
	if took := time.Since(t0); took > toolTimeout+headroom {
		t.Errorf("the run took %s with a %s tool timeout", took, toolTimeout)
	}
	if ans == nil || !strings.Contains(strings.ToLower(ans.Text), "time") {
		t.Fatalf("answer %+v, want the timeout reported to the model", ans)
	}
	waitFor(t, "the server's restart", func() bool { return m.Status()[0].Connects >= 2 })
	ans = within(t, 20*time.Second, "the second Session.Run", func() *agent.Answer {
		ans, err := s.Run(ctx, "again")
		if err != nil {
			t.Errorf("second run: %v", err)
		}
		return ans
	})
	if ans == nil || !strings.Contains(ans.Text, "small") {
		t.Fatalf("second answer %+v", ans)
	}
}

// TestUpdateFlood: a flood of resources/updated notifications for three
// URIs to a slow OnResourceUpdated is coalesced while one per URI waits
// in go-sdk's queue: each URI is still reported, far fewer times than
// sent, and Close is prompt.
func TestUpdateFlood(t *testing.T) {
	const n = 30_000
	cfg := quickConfig(testServer("upd", "", nil))
	var mu sync.Mutex
	seen := map[string]int{}
	cfg.OnResourceUpdated = func(_ context.Context, _, uri string) {
		mu.Lock()
		seen[uri]++
		mu.Unlock()
		time.Sleep(time.Millisecond) // a slow consumer
	}
	m, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.CallTool(context.Background(), "upd", "updateflood", json.RawMessage(fmt.Sprintf(`{"n":%d}`, n))); err != nil {
		_ = m.Close()
		t.Fatal(err)
	}
	within(t, 5*time.Second, "Manager.Close after the flood", func() error { return m.Close() })
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, c := range seen {
		total += c
	}
	t.Logf("%d updates sent, %d handled: %v", n, total, seen)
	if len(seen) != 3 || total > n/2 {
		t.Errorf("updates handled per URI: %v, want all three URIs and far fewer than %d", seen, n)
	}
}
