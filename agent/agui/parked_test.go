package agui_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/agui"
	"github.com/switchboard-dev/switchboard/llm"
)

// A durable agent that parks at once: the parked question is the
// interrupt, and the resume answers it in the inbox and resumes the run.
func TestParkedRunResumes(t *testing.T) {
	type noteIn struct {
		Text string `json:"text"`
	}
	note := agent.TypedTool(agent.ToolSpec{
		Name: "write_note", Description: "Write a note.",
		InputSchema: []byte(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, func(ctx context.Context, in noteIn) (string, error) { return "saved: " + in.Text, nil })
	a, err := agent.New(context.Background(), agent.Config{Name: "notes",
		Model: llm.NewScripted(llm.Calls(llm.CallTool("call_1", "write_note", map[string]string{"text": "milk"})), llm.SummarizeResults("Done")),
		Tools: []agent.Tool{note}, Durable: agent.Durable(agent.NewMemoryStore(agent.MemoryStoreOptions{}), -1)})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := agui.New(context.Background(), agui.Config{Runner: a})
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	first := post(t, srv.URL, `{"threadId":"t1","runId":"r1","messages":[{"id":"m1","role":"user","content":"note milk"}]}`)
	last := first[len(first)-1]
	if last.Outcome == nil || last.Outcome.Type != "interrupt" || !strings.HasPrefix(last.Outcome.Interrupts[0].ID, "parked-") {
		t.Fatalf("first run: %s, outcome %+v", types(first), last.Outcome)
	}
	id := last.Outcome.Interrupts[0].ID
	second := post(t, srv.URL, `{"threadId":"t1","runId":"r2","messages":[],"resume":[{"interruptId":"`+id+`","status":"resolved","payload":true}]}`)
	got := types(second)
	if !strings.Contains(got, "TOOL_CALL_RESULT") || !strings.HasSuffix(got, "RUN_FINISHED") {
		t.Fatalf("second run: %s", got)
	}
	for _, e := range second {
		if e.Type == "TOOL_CALL_RESULT" && !strings.Contains(e.Content, "saved: milk") {
			t.Fatalf("tool result %q", e.Content)
		}
	}
	if o := second[len(second)-1].Outcome; o == nil || o.Type != "success" {
		t.Fatalf("second run's outcome: %+v", o)
	}
}
