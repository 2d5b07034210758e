package agui_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/agui"
	"github.com/switchboard-dev/switchboard/llm"
)

// postStatus posts body and returns the status and the body's text.
func postStatus(t *testing.T, url, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const clientTools = `"tools":[{"name":"pick_color","description":"Pick a color.","parameters":{"type":"object"}},{"name":"pick_size","description":"Pick a size."}]`

// The model calls two client tools in one turn: every call ends up
// pending in some run, each follow-up answers the pending ones, and the
// agent run continues with both results.
func TestParallelClientTools(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	a, err := agent.New(context.Background(), agent.Config{Name: "shop", Model: llm.NewScripted(
		llm.Calls(llm.CallTool("c1", "pick_color", nil), llm.CallTool("c2", "pick_size", nil)),
		llm.SummarizeResults("Picked"))})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := agui.New(context.Background(), agui.Config{Runner: a})
	srv := httptest.NewServer(h)
	defer func() { srv.Close(); h.Close() }()

	msgs := `{"id":"m1","role":"user","content":"pick"},{"id":"a1","role":"assistant","toolCalls":[` +
		`{"id":"c1","type":"function","function":{"name":"pick_color","arguments":"{}"}},` +
		`{"id":"c2","type":"function","function":{"name":"pick_size","arguments":"{}"}}]}`
	evs := post(t, srv.URL, `{"threadId":"t","runId":"r1","messages":[{"id":"m1","role":"user","content":"pick"}],`+clientTools+`}`)
	answers := map[string]string{"c1": "red", "c2": "large"}
	for run := 2; ; run++ {
		last := evs[len(evs)-1]
		if last.Type != "RUN_FINISHED" || last.Outcome == nil || last.Outcome.Type != "success" {
			t.Fatalf("run %d: %s, outcome %+v", run-1, types(evs), last.Outcome)
		}
		if slices.ContainsFunc(evs, func(e wireEvent) bool { return e.Type == "TOOL_CALL_RESULT" }) {
			t.Fatalf("run %d: %s: a client tool's result came from the server", run-1, types(evs))
		}
		pending := last.Outcome.PendingToolCallIDs
		if len(pending) == 0 {
			break
		}
		if run > 3 {
			t.Fatalf("still pending %v after %d runs", pending, run-1)
		}
		for _, id := range pending {
			msgs += fmt.Sprintf(`,{"id":"t-%s","role":"tool","toolCallId":%q,"content":%q}`, id, id, answers[id])
			delete(answers, id)
		}
		evs = post(t, srv.URL, fmt.Sprintf(`{"threadId":"t","runId":"r%d","messages":[%s],%s}`, run, msgs, clientTools))
	}
	if len(answers) > 0 {
		t.Fatalf("calls never pending: %v", answers)
	}
	var text strings.Builder
	for _, e := range evs {
		if d, ok := e.Delta.(string); ok && e.Type == "TEXT_MESSAGE_CONTENT" {
			text.WriteString(d)
		}
	}
	if got := types(evs); !strings.HasSuffix(got, "TEXT_MESSAGE_END RUN_FINISHED") || !strings.Contains(text.String(), "red") || !strings.Contains(text.String(), "large") {
		t.Fatalf("last run %s: %q", got, text.String())
	}
}

// The client answers one of two pending calls: the follow-up ends at once
// with the other still pending, and the answer to it finishes the run.
func TestClientAnswersOneOfTwoCalls(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	a, err := agent.New(context.Background(), agent.Config{Name: "shop", Model: llm.NewScripted(
		llm.Calls(llm.CallTool("c1", "pick_color", nil), llm.CallTool("c2", "pick_size", nil)),
		llm.SummarizeResults("Picked"))})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := agui.New(context.Background(), agui.Config{Runner: a})
	srv := httptest.NewServer(h)
	defer func() { srv.Close(); h.Close() }()

	msgs := `{"id":"m1","role":"user","content":"pick"}`
	pending := map[string]bool{}
	answered := map[string]bool{}
	for run := 1; run <= 4; run++ {
		evs := post(t, srv.URL, fmt.Sprintf(`{"threadId":"t","runId":"r%d","messages":[%s],%s}`, run, msgs, clientTools))
		last := evs[len(evs)-1]
		if last.Outcome == nil || last.Outcome.Type != "success" {
			t.Fatalf("run %d: %s", run, types(evs))
		}
		if len(last.Outcome.PendingToolCallIDs) == 0 {
			if !answered["c1"] || !answered["c2"] {
				t.Fatalf("run %d finished with %v answered", run, answered)
			}
			return
		}
		for _, id := range last.Outcome.PendingToolCallIDs {
			pending[id] = true
		}
		// Answer one call per run, the smallest id still unanswered.
		for _, id := range []string{"c1", "c2"} {
			if pending[id] && !answered[id] {
				msgs += fmt.Sprintf(`,{"id":"t-%s","role":"tool","toolCallId":%q,"content":"x"}`, id, id)
				answered[id] = true
				break
			}
		}
	}
	t.Fatal("the run never finished")
}

// A second request for a thread whose run is streaming is a conflict; a
// new user message on a thread whose run waits on an interrupt cancels
// that run, whose interrupt then answers nothing.
func TestOneRunPerThread(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	started, release := make(chan struct{}), make(chan struct{})
	slow := agent.TypedTool(agent.ToolSpec{Name: "read_slowly", Description: "Reads.", ReadOnly: true,
		InputSchema: []byte(`{"type":"object"}`)}, func(ctx context.Context, _ struct{}) (string, error) {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "read", nil
	})
	a, err := agent.New(context.Background(), agent.Config{Name: "slow",
		Model: llm.NewScripted(llm.Calls(llm.CallTool("c1", "read_slowly", nil)), llm.Say("done")),
		Tools: []agent.Tool{slow}})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := agui.New(context.Background(), agui.Config{Runner: a})
	srv := httptest.NewServer(h)
	defer func() { srv.Close(); h.Close() }()

	first := make(chan []wireEvent, 1)
	go func() {
		first <- post(t, srv.URL, `{"threadId":"t","runId":"r1","messages":[{"id":"m","role":"user","content":"go"}]}`)
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the first run's tool never started")
	}
	if code, body := postStatus(t, srv.URL, `{"threadId":"t","runId":"r2","messages":[{"id":"m","role":"user","content":"again"}]}`); code != http.StatusConflict || !strings.Contains(body, "run in progress") {
		t.Fatalf("second request: %d %q, want 409", code, body)
	}
	close(release)
	select {
	case evs := <-first:
		if got := types(evs); !strings.HasSuffix(got, "RUN_FINISHED") {
			t.Fatalf("first run %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first run never finished")
	}

	n, err := agui.New(context.Background(), agui.Config{Runner: newNoteAgent(t)})
	if err != nil {
		t.Fatal(err)
	}
	nsrv := httptest.NewServer(n)
	defer func() { nsrv.Close(); n.Close() }()
	evs := post(t, nsrv.URL, `{"threadId":"t","runId":"r1","messages":[{"id":"m","role":"user","content":"note milk"}]}`)
	id := evs[len(evs)-1].Outcome.Interrupts[0].ID
	if got := types(post(t, nsrv.URL, `{"threadId":"t","runId":"r2","messages":[{"id":"m","role":"user","content":"note eggs"}]}`)); !strings.HasSuffix(got, "RUN_FINISHED") {
		t.Fatalf("the new run: %s", got)
	}
	if code, body := postStatus(t, nsrv.URL, `{"threadId":"t","runId":"r3","messages":[],"resume":[{"interruptId":"`+id+`","status":"resolved","payload":true}]}`); code != http.StatusBadRequest {
		t.Fatalf("resuming the abandoned run: %d %q, want 400", code, body)
	}
}

// plainRunner hides an agent's NewSessionFrom: a Runner that cannot
// continue a conversation.
type plainRunner struct{ agent.Runner }

// A client tool call nobody answers within AnswerTimeout cancels its run;
// the late result then continues the conversation as a new run of a
// Conversational Runner, and is refused, saying why, by any other.
func TestUnansweredClientToolTimesOut(t *testing.T) {
	for _, tc := range []struct {
		name   string
		runner func(*agent.Agent) agent.Runner
		code   int
		want   string
	}{
		{"conversational", func(a *agent.Agent) agent.Runner { return a }, http.StatusOK, `"result":"Picked (1 tool results, 0 errors)\n- pick_color: red"`},
		{"plain", func(a *agent.Agent) agent.Runner { return plainRunner{a} }, http.StatusBadRequest, "cannot continue a conversation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, _ := agent.New(context.Background(), agent.Config{Name: "c", Model: llm.NewScripted(
					llm.Calls(llm.CallTool("c1", "pick_color", nil)), llm.SummarizeResults("Picked"))})
				h, _ := agui.New(context.Background(), agui.Config{Runner: tc.runner(a), AnswerTimeout: time.Minute})
				defer h.Close()
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(
					`{"threadId":"t","runId":"r1","messages":[{"id":"m","role":"user","content":"pick"}],`+clientTools+`}`)))
				if !strings.Contains(rec.Body.String(), `"pendingToolCallIds":["c1"]`) {
					t.Fatalf("first run: %s", rec.Body.String())
				}
				time.Sleep(2 * time.Minute)
				synctest.Wait()
				rec = httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(
					`{"threadId":"t","runId":"r2","messages":[{"id":"m","role":"user","content":"pick"},`+
						`{"id":"a","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"pick_color","arguments":"{}"}}]},`+
						`{"id":"x","role":"tool","toolCallId":"c1","content":"red"}],`+clientTools+`}`)))
				if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) {
					t.Fatalf("late result: %d %s, want %d with %s", rec.Code, rec.Body.String(), tc.code, tc.want)
				}
			})
		})
	}
}
