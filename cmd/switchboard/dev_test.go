package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// readyWriter keeps what is written and reports the first line that
// matches.
type readyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	re    *regexp.Regexp
	found chan string
	once  sync.Once
}

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := w.re.FindSubmatch(w.buf.Bytes()); m != nil {
		w.once.Do(func() { w.found <- string(m[1]) })
	}
	return len(p), nil
}

func (w *readyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// startDev runs `switchboard dev` in-process and returns the console's
// URL (from its ready line) and a stop that waits for it.
func startDev(t *testing.T, args ...string) (string, func() error) {
	t.Helper()
	c, cancel := context.WithCancel(ctx(t, 60*time.Second))
	w := &readyWriter{re: regexp.MustCompile(`"url":"([^"]+)"`), found: make(chan string, 1)}
	errc := make(chan error, 1)
	go func() { errc <- run(c, append([]string{"dev"}, args...), nil, io.Discard, w) }()
	select {
	case u := <-w.found:
		return u, func() error { cancel(); return <-errc }
	case err := <-errc:
		cancel()
		t.Fatalf("switchboard dev ended: %v\n%s", err, w)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatalf("switchboard dev not ready in 30s\n%s", w)
	}
	return "", nil
}

func TestDevRunsTheAgentOfAFile(t *testing.T) {
	u, stop := startDev(t, "-config", filepath.Join("testdata", "dev", "agent.json"), "-listen", "127.0.0.1:0", "-identity", "tester")
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("dev: %v", err)
		}
	}()
	var info struct {
		Identity string
		CanStart bool `json:"can_start"`
		CanFork  bool `json:"can_fork"`
		Runner   string
		Models   []string
	}
	getJSON(t, u+"api/info", &info)
	if info.Identity != "tester" || !info.CanStart || !info.CanFork || info.Runner != "helper" || len(info.Models) != 2 {
		t.Fatalf("info = %+v", info)
	}
	var started struct{ Run string }
	postJSON(t, u+"api/runs", map[string]string{"input": "hello"}, &started)
	done := waitState(t, u, started.Run, "done")
	if done.Tokens == 0 {
		t.Errorf("summary = %+v", done)
	}
	var fork struct{ Run string }
	postJSON(t, u+"api/runs/"+started.Run+"/fork", map[string]any{"turn": 0, "input": "again", "model": "echo-2", "instructions": "Be brief."}, &fork)
	f := waitState(t, u, fork.Run, "done")
	if f.ForkOf != started.Run {
		t.Errorf("fork summary = %+v", f)
	}
}

type devSummary struct {
	ID, State string
	Tokens    int
	ForkOf    string `json:"fork_of"`
}

// waitState polls a run's summary until it has state.
func waitState(t *testing.T, u, run, state string) devSummary {
	t.Helper()
	var s devSummary
	testkit.WaitFor(t, 20*time.Second, "run "+run+" in state "+state, func() bool {
		s = devSummary{}
		res, err := http.Get(u + "api/runs/" + run)
		if err != nil {
			t.Fatal(err)
		}
		_ = json.NewDecoder(res.Body).Decode(&s)
		res.Body.Close()
		return s.State == state
	})
	return s
}

func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, b)
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

func postJSON(t *testing.T, url string, body, out any) {
	t.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Switchboard-Console", "1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("POST %s: %d %s", url, res.StatusCode, b)
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

func TestDevRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"nothing", nil, "give -config"},
		{"extra", []string{"-watch", "x"}, "unexpected arguments"},
		{"unknown field", []string{"-config", write("a.json", `{"nme":"x"}`)}, "unknown field"},
		{"unknown model", []string{"-config", write("b.json", `{"model":"x","models":[{"name":"y","provider":"scripted"}]}`)}, `model "x" is not among models`},
		{"twice", []string{"-config", write("c.json", `{"models":[{"name":"y","provider":"scripted"},{"name":"y","provider":"scripted"}]}`)}, "named twice"},
		{"provider", []string{"-config", write("d.json", `{"models":[{"name":"y","provider":"nope"}]}`), "-listen", "127.0.0.1:0"}, "unknown provider"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			err := run(ctx(t, 30*time.Second), append([]string{"dev"}, tt.args...), nil, io.Discard, &out)
			if err == nil || !strings.Contains(out.String()+err.Error(), tt.want) {
				t.Errorf("%v, %q; want it refused naming %q", err, out.String(), tt.want)
			}
		})
	}
}

// TestDevWatchAttachesToNATS: -watch -nats shows the runs another
// connection publishes on an existing NATS server.
func TestDevWatchAttachesToNATS(t *testing.T) {
	host := testkit.NewBus(t, bus.Config{Listen: "127.0.0.1:0", Token: "nats-secret"})
	u, stop := startDev(t, "-watch", "-nats", host.ClientURL(), "-nats-token", "nats-secret", "-listen", "127.0.0.1:0")
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("dev: %v", err)
		}
	}()
	getJSON(t, u+"api/info", &struct{}{}) // starts the console's index
	c := ctx(t, 30*time.Second)
	host.Emit(c, agent.Event{Type: agent.EventRunStarted, Run: "run_elsewhere", Agent: "remote", Text: "from another process", Time: time.Now()})
	host.Emit(c, agent.Event{Type: agent.EventFinal, Run: "run_elsewhere", Agent: "remote", Time: time.Now(), Answer: &agent.Answer{Turns: 1}})
	if err := host.Flush(c); err != nil {
		t.Fatal(err)
	}
	waitState(t, u, "run_elsewhere", "done")
}

// TestDevBeyondLoopbackNeedsToken: listening beyond loopback without
// -token makes one; the printed link carries it and requests without it
// are refused.
func TestDevBeyondLoopbackNeedsToken(t *testing.T) {
	u, stop := startDev(t, "-watch", "-listen", "0.0.0.0:0")
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("dev: %v", err)
		}
	}()
	base, tok, ok := strings.Cut(u, "?token=")
	if !ok || len(tok) < 16 {
		t.Fatalf("link %q has no token", u)
	}
	base = strings.Replace(base, "0.0.0.0", "127.0.0.1", 1)
	base = strings.Replace(base, "[::]", "127.0.0.1", 1)
	res, err := http.Get(base + "api/info")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %d", res.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"api/info", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("with the token: %d", res.StatusCode)
	}
}
