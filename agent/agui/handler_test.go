package agui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/agui"
	"github.com/switchboard-dev/switchboard/llm"
)

// newNoteAgent is an agent whose one tool, write_note, asks for permission
// (the default classifier asks before writes).
func newNoteAgent(t testing.TB) *agent.Agent {
	t.Helper()
	type noteIn struct {
		Text string `json:"text"`
	}
	note := agent.TypedTool(agent.ToolSpec{
		Name: "write_note", Description: "Write a note.",
		InputSchema: []byte(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, func(ctx context.Context, in noteIn) (string, error) { return "saved: " + in.Text, nil })
	model := llm.NewScripted(
		llm.Calls(llm.CallTool("call_1", "write_note", map[string]string{"text": "milk"})),
		llm.SummarizeResults("Done"),
	)
	a, err := agent.New(context.Background(), agent.Config{Name: "notes", Model: model, Tools: []agent.Tool{note}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

type wireEvent struct {
	Type       string `json:"type"`
	ToolCallID string `json:"toolCallId"`
	Content    string `json:"content"`
	Delta      any    `json:"delta"`
	Outcome    *struct {
		Type               string   `json:"type"`
		PendingToolCallIDs []string `json:"pendingToolCallIds"`
		Interrupts         []struct {
			ID         string `json:"id"`
			Reason     string `json:"reason"`
			ToolCallID string `json:"toolCallId"`
		} `json:"interrupts"`
	} `json:"outcome"`
}

func post(t *testing.T, url, body string) []wireEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var out []wireEvent
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev wireEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("event %s: %v", line, err)
		}
		out = append(out, ev)
	}
	return out
}

func types(evs []wireEvent) string {
	var s []string
	for _, e := range evs {
		s = append(s, e.Type)
	}
	return strings.Join(s, " ")
}

func TestApprovalRoundTrip(t *testing.T) {
	h, err := agui.New(context.Background(), agui.Config{Runner: newNoteAgent(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	first := post(t, srv.URL, `{"threadId":"t1","runId":"r1","messages":[{"id":"m1","role":"user","content":"note milk"}]}`)
	if got, want := types(first), "RUN_STARTED TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END RUN_FINISHED"; got != want {
		t.Fatalf("first run: %s, want %s", got, want)
	}
	last := first[len(first)-1]
	if last.Outcome == nil || last.Outcome.Type != "interrupt" || len(last.Outcome.Interrupts) != 1 ||
		last.Outcome.Interrupts[0].Reason != "tool_approval" || last.Outcome.Interrupts[0].ToolCallID != "call_1" {
		t.Fatalf("first run's outcome: %+v", last.Outcome)
	}
	id := last.Outcome.Interrupts[0].ID
	second := post(t, srv.URL, `{"threadId":"t1","runId":"r2","messages":[],"resume":[{"interruptId":"`+id+`","status":"resolved","payload":{"approved":true}}]}`)
	got := types(second)
	if !strings.HasPrefix(got, "RUN_STARTED TOOL_CALL_RESULT") || !strings.HasSuffix(got, "TEXT_MESSAGE_END RUN_FINISHED") {
		t.Fatalf("second run: %s", got)
	}
	if second[1].Content != "saved: milk" && !strings.Contains(second[1].Content, "saved: milk") {
		t.Fatalf("tool result %q", second[1].Content)
	}
	if o := second[len(second)-1].Outcome; o == nil || o.Type != "success" {
		t.Fatalf("second run's outcome: %+v", o)
	}
}

func TestBadInput(t *testing.T) {
	h, _ := agui.New(context.Background(), agui.Config{Runner: newNoteAgent(t), MaxBody: 512})
	defer h.Close()
	for _, tc := range []struct {
		name, body, want string
	}{
		{"not json", `{`, "not a RunAgentInput"},
		{"no threadId", `{"runId":"r","messages":[]}`, `"threadId" is required`},
		{"no runId", `{"threadId":"t","messages":[]}`, `"runId" is required`},
		{"no messages", `{"threadId":"t","runId":"r"}`, `"messages" is required`},
		{"messages wrong type", `{"threadId":"t","runId":"r","messages":{}}`, `"messages"`},
		{"bad role", `{"threadId":"t","runId":"r","messages":[{"id":"1","role":"robot","content":"x"}]}`, `messages[0].role`},
		{"bad status", `{"threadId":"t","runId":"r","messages":[],"resume":[{"interruptId":"i","status":"ok"}]}`, `resume[0].status`},
		{"too large", `{"threadId":"` + strings.Repeat("x", 600) + `"}`, "larger than 512 bytes"},
		{"no user text", `{"threadId":"t","runId":"r","messages":[]}`, "no user message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.body)))
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), tc.want) {
				t.Fatalf("got %d %q, want 400 with %q", rec.Code, rec.Body.String(), tc.want)
			}
		})
	}
}

// keyRecorder records each request's cache key.
type keyRecorder struct {
	llm.Model
	keys chan string
}

func (k *keyRecorder) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	k.keys <- req.CacheKey
	return k.Model.Generate(ctx, req)
}

// TestThreadIsCacheKey checks that the runs of one thread, each a new
// session, share the thread's id as their prompt cache key.
func TestThreadIsCacheKey(t *testing.T) {
	model := &keyRecorder{Model: llm.NewScripted(llm.Say("one"), llm.Say("two")), keys: make(chan string, 4)}
	a, err := agent.New(context.Background(), agent.Config{Name: "keys", Model: model})
	if err != nil {
		t.Fatal(err)
	}
	h, err := agui.New(context.Background(), agui.Config{Runner: a})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, body := range []string{
		`{"threadId":"t9","runId":"r1","messages":[{"id":"m1","role":"user","content":"hi"}]}`,
		`{"threadId":"t9","runId":"r2","messages":[{"id":"m1","role":"user","content":"hi"},` +
			`{"id":"m2","role":"assistant","content":"one"},{"id":"m3","role":"user","content":"again"}]}`,
	} {
		if evs := post(t, srv.URL, body); !strings.HasSuffix(types(evs), "RUN_FINISHED") {
			t.Fatalf("run: %s", types(evs))
		}
		if k := <-model.keys; k != "t9" {
			t.Fatalf("cache key %q, want the thread id t9", k)
		}
	}
}
