package agui_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/agui"
	"github.com/switchboard-dev/switchboard/llm"
)

// A client that goes away mid-run cancels the run: the tool sees its
// context end, and no goroutine outlives the handler.
func TestClientDisconnectCancelsRun(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	started, cancelled := make(chan struct{}), make(chan struct{})
	wait := agent.TypedTool(agent.ToolSpec{
		Name: "read_slowly", Description: "Reads until cancelled.",
		InputSchema: []byte(`{"type":"object"}`),
	}, func(ctx context.Context, _ struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return "", ctx.Err()
	})
	a, err := agent.New(context.Background(), agent.Config{Name: "slow",
		Model: llm.NewScripted(llm.Calls(llm.CallTool("c1", "read_slowly", nil)), llm.Say("never")),
		Tools: []agent.Tool{wait}, Permissions: agent.AllowAll()})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := agui.New(context.Background(), agui.Config{Runner: a})
	srv := httptest.NewServer(h)

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(
		`{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":"go"}]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), "TOOL_CALL_END") {
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool never started")
	}
	cancel()
	resp.Body.Close()
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the run was not cancelled when the client went away")
	}
	srv.Close()
	h.Close()
}
