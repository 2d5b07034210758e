package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/rs/zerolog"
)

// records parses one JSON object per line.
func records(t *testing.T, out string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not one JSON record: %q: %v", line, err)
		}
		recs = append(recs, m)
	}
	return recs
}

// TestSlogBridge: a2a-go's slog records become one structured zerolog
// record each: the level and message as zerolog's, attributes as fields,
// never a JSON string inside the message.
func TestSlogBridge(t *testing.T) {
	task := &a2ago.Task{ID: "t1", ContextID: "c1", Status: a2ago.TaskStatus{State: a2ago.TaskStateWorking}}
	tests := []struct {
		name  string
		log   func(l *slog.Logger)
		level zerolog.Level
		want  map[string]any // nil: nothing is written
	}{
		{"attrs", func(l *slog.Logger) {
			l.Warn("push failed", "task", "t9", "attempt", 3, "ok", false, "took", 1500*time.Millisecond, "ratio", 0.5)
		}, zerolog.DebugLevel, map[string]any{"level": "warn", "message": "push failed", "task": "t9", "attempt": 3.0,
			"ok": false, "took": 1500.0, "ratio": 0.5}},
		{"error", func(l *slog.Logger) { l.Error("send failed", "error", errors.New("boom")) },
			zerolog.DebugLevel, map[string]any{"level": "error", "message": "send failed", "error": "boom"}},
		{"group and with", func(l *slog.Logger) {
			l.With("peer", "js").WithGroup("req").Info("call", slog.Group("http", "status", 201), "method", "SendMessage")
		}, zerolog.DebugLevel, map[string]any{"level": "info", "message": "call", "peer": "js",
			"req.http": map[string]any{"status": 201.0}, "req.method": "SendMessage"}},
		{"a2a task formatted", func(l *slog.Logger) { l.Info("saved", "task", task) },
			zerolog.DebugLevel, map[string]any{"message": "saved", "task": map[string]any{"id": "t1", "context_id": "c1", "state": "TASK_STATE_WORKING"}}},
		{"below the bridge's minimum", func(l *slog.Logger) { l.Debug("noise") }, zerolog.TraceLevel, nil},
		{"below the logger's level", func(l *slog.Logger) { l.Info("quiet") }, zerolog.WarnLevel, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			zl := zerolog.New(&buf).Level(tc.level)
			tc.log(newSlogger(&zl, slog.LevelInfo))
			recs := records(t, buf.String())
			if tc.want == nil {
				if len(recs) != 0 {
					t.Fatalf("wrote %v", recs)
				}
				return
			}
			if len(recs) != 1 {
				t.Fatalf("records = %v", recs)
			}
			for k, v := range tc.want {
				g, _ := json.Marshal(recs[0][k])
				w, _ := json.Marshal(v)
				if string(g) != string(w) {
					t.Errorf("%s = %s, want %s (record %v)", k, g, w, recs[0])
				}
			}
		})
	}
}

// closeFails is a transport whose answers' bodies fail to close, which
// a2a-go's client logs.
type closeFails struct{}

type failingClose struct{ io.ReadCloser }

func (f failingClose) Close() error {
	_ = f.ReadCloser.Close()
	return errors.New("close refused by the test")
}

func (closeFails) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = failingClose{resp.Body}
	}
	return resp, err
}

// TestSlogBridgeReachesA2AGoClient: what a toolset's a2a-go client logs
// (here, a response body that fails to close) lands in the toolset's
// zerolog logger as one structured record.
func TestSlogBridgeReachesA2AGoClient(t *testing.T) {
	var buf lockedBuffer
	zl := zerolog.New(&buf)
	_, hs := newWorker(t, ServerConfig{})
	ctx := ctxT(t)
	ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "w", URL: hs.URL, NoStreaming: true}}, Logger: &zl,
		HTTPClient: &http.Client{Transport: closeFails{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	c, _ := ts.Client("w")
	if _, err := c.SendMessage(ctx, textMsg("hi")); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range records(t, buf.String()) {
		if r["message"] == "failed to close http response body" {
			found = r["level"] == "error" && r["error"] == "close refused by the test"
		}
	}
	if !found {
		t.Fatalf("log:\n%s", buf.String())
	}
}
