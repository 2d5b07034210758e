package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.WaitFor(t, 20*time.Second, what, cond)
}

func readMarker(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func TestCrashMidCall(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	m := newManager(t, quickConfig(testServer("crashy", "", map[string]string{"TESTSERVER_MARKER": marker})))
	ctx := context.Background()
	if _, err := m.CallTool(ctx, "crashy", "echo", json.RawMessage(`{"text":"before"}`)); err != nil {
		t.Fatal(err)
	}
	_, err := m.CallTool(ctx, "crashy", "crash", nil)
	if !errors.Is(err, failure.Unavailable) {
		t.Fatalf("crash: err = %v, want kind unavailable", err)
	}
	var fe *failure.Error
	if !errors.As(err, &fe) || fe.Source != failure.SourceMCP || fe.Name != "crashy" {
		t.Fatalf("crash: err = %#v, want source mcp, name crashy", err)
	}
	res, err := m.CallTool(ctx, "crashy", "echo", json.RawMessage(`{"text":"after"}`))
	if err != nil || res.Text() != "after" {
		t.Fatalf("after restart: %v, %v", res, err)
	}
	if st := m.Status()[0]; st.Connects != 2 {
		t.Errorf("connects = %d, want 2", st.Connects)
	}
	if !strings.Contains(readMarker(marker), "crashing") {
		t.Error("the server never ran the crash tool")
	}
}

func TestHangTimesOutAndCancels(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	sc := testServer("hangs", "", map[string]string{"TESTSERVER_MARKER": marker})
	sc.Timeout = 300 * time.Millisecond
	m := newManager(t, quickConfig(sc))
	_, err := m.CallTool(context.Background(), "hangs", "hang", json.RawMessage(`{}`))
	if !errors.Is(err, failure.Timeout) {
		t.Fatalf("err = %v, want timeout", err)
	}
	waitFor(t, "the server to see notifications/cancelled", func() bool {
		return strings.Contains(readMarker(marker), "cancelled hang")
	})
	// The server is still usable.
	if _, err := m.CallTool(context.Background(), "hangs", "echo", json.RawMessage(`{"text":"ok"}`)); err != nil {
		t.Fatal(err)
	}
}

func TestContextCancelReachesServer(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	m := newManager(t, quickConfig(testServer("c", "", map[string]string{"TESTSERVER_MARKER": marker})))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := m.CallTool(ctx, "c", "hang", nil)
		done <- err
	}()
	waitFor(t, "the call to start", func() bool { return strings.Contains(readMarker(marker), "started hang") })
	cancel()
	if err := <-done; !errors.Is(err, failure.Canceled) {
		t.Fatalf("err = %v, want canceled", err)
	}
	waitFor(t, "cancellation at the server", func() bool { return strings.Contains(readMarker(marker), "cancelled hang") })
}

func TestIdleTimeoutResetByProgress(t *testing.T) {
	sc := testServer("idle", "", nil)
	sc.IdleTimeout = 400 * time.Millisecond
	m := newManager(t, quickConfig(sc))
	tests := []struct {
		name    string
		args    string
		wantErr bool
	}{
		// 6 steps of 100ms each take longer than the idle timeout, but each
		// step reports progress.
		{"progress keeps it alive", `{"steps":6,"step_ms":100}`, false},
		{"silence times out", `{}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := "slow"
			if tt.wantErr {
				tool = "hang"
			}
			_, err := m.CallTool(context.Background(), "idle", tool, json.RawMessage(tt.args))
			if tt.wantErr != (err != nil) {
				t.Fatalf("err = %v", err)
			}
			if tt.wantErr && !errors.Is(err, failure.Timeout) {
				t.Fatalf("err = %v, want timeout", err)
			}
		})
	}
}

func TestGarbageOnStdout(t *testing.T) {
	cfg := quickConfig(testServer("garbage", "garbage", nil), testServer("good", "", nil))
	cfg.MaxRestarts = 2
	m := newManager(t, cfg)
	if _, err := m.CallTool(context.Background(), "good", "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatalf("the good server suffers: %v", err)
	}
	waitFor(t, "the garbage server to be given up", func() bool { return m.Status()[0].State == stateFailed })
	st := m.Status()[0]
	if !errors.Is(st.Err, failure.Protocol) {
		t.Fatalf("status err = %v, want protocol", st.Err)
	}
	_, err := m.CallTool(context.Background(), "garbage", "echo", json.RawMessage(`{"text":"x"}`))
	if !errors.Is(err, failure.Unavailable) {
		t.Fatalf("err = %v, want unavailable", err)
	}
}

func TestHugeResultIsSpilled(t *testing.T) {
	cfg := quickConfig(testServer("big", "", nil))
	cfg.SaveResultsOver = 10_000
	m := newManager(t, cfg)
	res, err := m.CallTool(context.Background(), "big", "huge", json.RawMessage(`{"bytes":3000000}`))
	if err != nil {
		t.Fatal(err)
	}
	text := res.Text()
	if len(text) > 5000 || !strings.Contains(text, "3000000 bytes") {
		t.Fatalf("pointer result is %d bytes: %.300s", len(text), text)
	}
	i := strings.Index(text, `"res_`)
	id := text[i+1 : i+1+strings.IndexByte(text[i+1:], '"')]
	tools, _ := m.Toolset().Tools(context.Background())
	var reader func(args string) string
	for _, tl := range tools {
		if tl.Spec().Name == nameReadResult {
			reader = func(args string) string {
				r, err := tl.Call(context.Background(), json.RawMessage(args))
				if err != nil {
					t.Fatal(err)
				}
				return r.Text()
			}
		}
	}
	if reader == nil {
		t.Fatal("no read-result tool")
	}
	part := reader(`{"id":"` + id + `","offset":2999970,"length":100}`)
	if !strings.Contains(part, "[bytes 2999970 to 3000000 of 3000000]") {
		t.Fatalf("tail read: %q", part)
	}
	if got := reader(`{"id":"nope"}`); !strings.Contains(got, "no saved result") {
		t.Fatalf("bad id: %q", got)
	}
}

func TestNeverAnswersHandshake(t *testing.T) {
	silent := testServer("silent", "nohandshake", nil)
	silent.StartupTimeout = 700 * time.Millisecond
	cfg := quickConfig(silent, testServer("good", "", nil))
	cfg.DiscoveryTimeout = 300 * time.Millisecond
	cfg.MaxRestarts = 1
	m := newManager(t, cfg)
	st := m.Status()
	if st[0].State != stateFailed || !errors.Is(st[0].Err, failure.Timeout) {
		t.Fatalf("silent server: %+v, want failed with a timeout", st[0])
	}
	if st[1].State != stateReady {
		t.Fatalf("good server: %+v", st[1])
	}
}

func TestLegacyServerIgnoringDiscover(t *testing.T) {
	cfg := quickConfig(testServer("legacy", "nodiscover", nil), testServer("modern", "", nil))
	cfg.DiscoveryTimeout = 500 * time.Millisecond
	m := newManager(t, cfg)
	st := m.Status()
	if st[0].State != stateReady || st[0].Protocol != legacyProtocol {
		t.Fatalf("legacy: %+v, want ready on %s", st[0], legacyProtocol)
	}
	if st[1].State != stateReady || st[1].Protocol != "2026-07-28" {
		t.Fatalf("modern: %+v, want ready on 2026-07-28", st[1])
	}
	if _, err := m.CallTool(context.Background(), "legacy", "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatal(err)
	}
}

func TestFloodOfListChanged(t *testing.T) {
	m := newManager(t, quickConfig(testServer("flood", "", nil)))
	ts := m.Toolset()
	before, _ := ts.Tools(context.Background())
	var signals atomic.Int32
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-m.changed:
				signals.Add(1)
			case <-stop:
				return
			}
		}
	}()
	if _, err := m.CallTool(context.Background(), "flood", "flood", json.RawMessage(`{"n":300}`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "all 300 new tools", func() bool {
		tools, _ := ts.Tools(context.Background())
		return len(tools) == len(before)+300
	})
	close(stop)
	<-watched
	if n := signals.Load(); n < 1 || n > 300 {
		t.Errorf("%d change signals for 300 notifications", n)
	}
	t.Logf("300 list_changed notifications -> %d refresh signals", signals.Load())
}

func TestStructuredOutput(t *testing.T) {
	m := newManager(t, quickConfig(testServer("s", "", nil)))
	tests := []struct {
		tool     string
		wantKind failure.Kind
		wantJSON string
	}{
		{"weather", 0, `{"city":"Oslo","temp_c":21.5}`},
		{"badweather", failure.Protocol, ""},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res, err := m.CallTool(context.Background(), "s", tt.tool, json.RawMessage(`{"text":"Oslo"}`))
			if tt.wantKind != 0 {
				if !errors.Is(err, tt.wantKind) {
					t.Fatalf("err = %v, want %v", err, tt.wantKind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			last := res.Parts[len(res.Parts)-1]
			if last.Type != "json" || string(last.JSON) != tt.wantJSON {
				t.Fatalf("parts = %+v", res.Parts)
			}
			// The tool's spec carries the server's outputSchema.
			tools, err := m.Toolset().Tools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range tools {
				if s := tl.Spec(); s.Source.Tool == tt.tool && !strings.Contains(string(s.OutputSchema), `"temp_c"`) {
					t.Fatalf("spec of %s: OutputSchema %s", tt.tool, s.OutputSchema)
				}
			}
		})
	}
}

func TestToolErrorIsResult(t *testing.T) {
	m := newManager(t, quickConfig(testServer("s", "", nil)))
	res, err := m.CallTool(context.Background(), "s", "fail", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Text(), "the widget is broken") {
		t.Fatalf("res = %+v", res)
	}
	_, err = m.CallTool(context.Background(), "s", "no-such-tool", nil)
	var fe *failure.Error
	if !errors.As(err, &fe) || fe.Source != failure.SourceMCP {
		t.Fatalf("unknown tool: %v", err)
	}
}
