package console_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus/console"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

type liveMsg struct {
	Kind     string                `json:"kind"`
	Run      *console.RunSummary   `json:"run"`
	Question *console.QuestionView `json:"question"`
	Answer   *console.AnswerRecord `json:"answer"`
}

func decodeLive(t testing.TB, m sseMsg) liveMsg {
	t.Helper()
	var l liveMsg
	if m.Event == "" {
		if err := json.Unmarshal([]byte(m.Data), &l); err != nil {
			t.Fatalf("live message %q: %v", m.Data, err)
		}
	}
	return l
}

func TestStartRunAppearsLiveAndCompletes(t *testing.T) {
	e := newEnv(t, console.Config{})
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	live := e.sse(t, ctx, "/api/live")
	until(t, live, 10*time.Second, "hello", func(m sseMsg) bool { return m.Event == "hello" })

	var started struct{ Run string }
	if code := e.do(t, http.MethodPost, "/api/runs", map[string]string{"input": "hi there"}, &started); code != http.StatusAccepted {
		t.Fatalf("start: %d", code)
	}
	until(t, live, 10*time.Second, "the new run", func(m sseMsg) bool {
		l := decodeLive(t, m)
		return l.Kind == "run" && l.Run.ID == started.Run && l.Run.Input == "hi there"
	})
	until(t, live, 10*time.Second, "the run's end", func(m sseMsg) bool {
		l := decodeLive(t, m)
		return l.Kind == "state" && l.Run.ID == started.Run && l.Run.State == "done"
	})

	var page struct {
		Runs []console.RunSummary
		Next uint64
	}
	e.do(t, http.MethodGet, "/api/runs", nil, &page)
	if len(page.Runs) != 1 || page.Runs[0].ID != started.Run || page.Runs[0].State != "done" || page.Runs[0].Turn != 1 {
		t.Fatalf("runs page = %+v", page)
	}

	events := e.sse(t, ctx, "/api/runs/"+started.Run+"/events")
	var types []string
	until(t, events, 10*time.Second, "the final event", func(m sseMsg) bool {
		var ev agent.Event
		if err := json.Unmarshal([]byte(m.Data), &ev); err != nil {
			t.Fatal(err)
		}
		types = append(types, string(ev.Type))
		return ev.Type == agent.EventFinal && strings.Contains(ev.Text, "hi there")
	})
	if types[0] != "run_started" {
		t.Errorf("timeline starts with %v", types)
	}
}

func TestAnswerLivePermissionAsk(t *testing.T) {
	e := newEnv(t, console.Config{Identity: "ada"})
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	live := e.sse(t, ctx, "/api/live")
	until(t, live, 10*time.Second, "hello", func(m sseMsg) bool { return m.Event == "hello" })
	var started struct{ Run string }
	e.do(t, http.MethodPost, "/api/runs", map[string]string{"input": "please delete it"}, &started)
	q := decodeLive(t, until(t, live, 10*time.Second, "the permission ask", func(m sseMsg) bool {
		l := decodeLive(t, m)
		return l.Kind == "question" && l.Question.Run == started.Run
	})).Question
	if q.Tool != "delete_file" || q.Kind != agent.ElicitPermission || !q.Live {
		t.Fatalf("question = %+v", q)
	}
	var qs struct{ Questions []console.QuestionView }
	e.do(t, http.MethodGet, "/api/questions", nil, &qs)
	if len(qs.Questions) != 1 || qs.Questions[0].ID != q.ID {
		t.Fatalf("inbox = %+v", qs)
	}
	tests := []struct {
		name   string
		body   map[string]any
		status int
	}{
		{"unknown action", map[string]any{"action": "maybe"}, http.StatusBadRequest},
		{"unknown field", map[string]any{"action": "accept", "extra": 1}, http.StatusBadRequest},
		{"accept", map[string]any{"action": "accept"}, http.StatusOK},
		{"second answer", map[string]any{"action": "accept"}, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := e.do(t, http.MethodPost, "/api/questions/"+q.ID+"/answer", tt.body, nil); code != tt.status {
				t.Errorf("status %d, want %d", code, tt.status)
			}
		})
	}
	until(t, live, 10*time.Second, "the run's end", func(m sseMsg) bool {
		l := decodeLive(t, m)
		return l.Kind == "state" && l.Run.ID == started.Run && l.Run.State == "done"
	})
	var rec console.AnswerRecord
	if code := e.do(t, http.MethodGet, "/api/questions/"+q.ID+"/answer", nil, &rec); code != http.StatusOK {
		t.Fatalf("answer record: %d", code)
	}
	if rec.By != "ada" || rec.Action != agent.ElicitAccept || rec.Run != started.Run || rec.From == "" {
		t.Errorf("answer record = %+v", rec)
	}
	var runAnswers struct{ Answers []console.AnswerRecord }
	e.do(t, http.MethodGet, "/api/runs/"+started.Run+"/answers", nil, &runAnswers)
	if len(runAnswers.Answers) != 1 || runAnswers.Answers[0].Question != q.ID || runAnswers.Answers[0].By != "ada" {
		t.Errorf("the run's answers = %+v", runAnswers)
	}
	events := e.sse(t, ctx, "/api/runs/"+started.Run+"/events")
	until(t, events, 10*time.Second, "the deleted result", func(m sseMsg) bool {
		return strings.Contains(m.Data, `"final"`) && strings.Contains(m.Data, "deleted tmp/x")
	})
}

func TestForkIsANewRunRecordedAsFork(t *testing.T) {
	e := newEnv(t, console.Config{})
	ans, err := e.a.Run(e.ctx, "first input")
	if err != nil {
		t.Fatal(err)
	}
	var fork struct {
		Run    string
		ForkOf string `json:"fork_of"`
	}
	// The index may not have seen the parent yet: the fork reads the bus.
	if code := e.do(t, http.MethodPost, "/api/runs/"+ans.Run+"/fork", map[string]any{"turn": 0, "input": "changed input"}, &fork); code != http.StatusAccepted {
		t.Fatalf("fork: %d", code)
	}
	if fork.Run == "" || fork.Run == ans.Run || fork.ForkOf != ans.Run {
		t.Fatalf("fork = %+v", fork)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	events := e.sse(t, ctx, "/api/runs/"+fork.Run+"/events")
	until(t, events, 10*time.Second, "the fork's answer", func(m sseMsg) bool {
		return strings.Contains(m.Data, `"final"`) && strings.Contains(m.Data, "you said changed input")
	})
	var s console.RunSummary
	if code := e.do(t, http.MethodGet, "/api/runs/"+fork.Run, nil, &s); code != http.StatusOK {
		t.Fatalf("fork summary: %d", code)
	}
	if s.ForkOf != ans.Run || s.ForkTurn != 0 {
		t.Errorf("fork summary = %+v", s)
	}
	tests := []struct {
		name   string
		body   map[string]any
		status int
	}{
		{"turn past the run", map[string]any{"turn": 5, "input": "x"}, http.StatusBadRequest},
		{"later turn without input", map[string]any{"turn": 1}, http.StatusBadRequest},
		{"model change without a Forker", map[string]any{"turn": 0, "model": "other"}, http.StatusNotImplemented},
		{"unknown run", nil, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := "/api/runs/" + ans.Run + "/fork"
			body := tt.body
			if body == nil {
				path, body = "/api/runs/run_nosuchrun/fork", map[string]any{"turn": 0}
			}
			if code := e.do(t, http.MethodPost, path, body, nil); code != tt.status {
				t.Errorf("status %d, want %d", code, tt.status)
			}
		})
	}
}

// TestRunsPaging: pages hold at most PageSize runs, newest first, and the
// cursor walks through every run once.
func TestRunsPaging(t *testing.T) {
	e := newEnv(t, console.Config{PageSize: 20})
	const n = 55
	for i := range n {
		run := fmt.Sprintf("run_page%03d", i)
		e.b.Emit(e.ctx, agent.Event{Type: agent.EventRunStarted, Run: run, Agent: "helper", Text: fmt.Sprint("input ", i), Time: time.Now()})
		e.b.Emit(e.ctx, agent.Event{Type: agent.EventFinal, Run: run, Agent: "helper", Text: "ok", Time: time.Now(), Answer: &agent.Answer{Run: run, Turns: 1}})
	}
	if err := e.b.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Start(e.ctx); err != nil {
		t.Fatal(err)
	}
	var seen []string
	deadline := time.Now().Add(20 * time.Second)
	for len(seen) < n && time.Now().Before(deadline) {
		seen = seen[:0]
		var before uint64
		for pages := 0; pages < 10; pages++ {
			var page struct {
				Runs []console.RunSummary
				Next uint64
			}
			e.do(t, http.MethodGet, fmt.Sprintf("/api/runs?before=%d", before), nil, &page)
			if len(page.Runs) > 20 {
				t.Fatalf("a page holds %d runs, more than its 20", len(page.Runs))
			}
			for _, r := range page.Runs {
				seen = append(seen, r.ID)
				if r.State != "done" {
					t.Errorf("%s: state %q", r.ID, r.State)
				}
			}
			if page.Next == 0 {
				break
			}
			before = page.Next
		}
	}
	if len(seen) != n {
		t.Fatalf("paged through %d runs, want %d", len(seen), n)
	}
	for i, id := range seen {
		if want := fmt.Sprintf("run_page%03d", n-1-i); id != want {
			t.Fatalf("run %d is %s, want %s (newest first)", i, id, want)
		}
	}
	tests := []struct {
		query  string
		status int
	}{
		{"?limit=0", http.StatusBadRequest},
		{"?limit=x", http.StatusBadRequest},
		{"?before=-1", http.StatusBadRequest},
		{"?limit=100000", http.StatusOK},
	}
	for _, tt := range tests {
		if code := e.do(t, http.MethodGet, "/api/runs"+tt.query, nil, nil); code != tt.status {
			t.Errorf("%s: %d, want %d", tt.query, code, tt.status)
		}
	}
}

func TestRedactsSecrets(t *testing.T) {
	e := newEnv(t, console.Config{})
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	const secret = "sk-abcdefghijklmnopqrstuvwxyz0123"
	ans, err := e.a.Run(ctx, "use api_key="+secret+" please")
	if err != nil {
		t.Fatal(err)
	}
	events := e.sse(t, ctx, "/api/runs/"+ans.Run+"/events")
	until(t, events, 10*time.Second, "the final event", func(m sseMsg) bool {
		if strings.Contains(m.Data, secret) {
			t.Fatalf("the timeline shows the secret: %s", m.Data)
		}
		return strings.Contains(m.Data, `"final"`)
	})
	if err := e.c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var s console.RunSummary
	testkit.WaitFor(t, 10*time.Second, "run "+ans.Run+" in the index", func() bool {
		return e.do(t, http.MethodGet, "/api/runs/"+ans.Run, nil, &s) == http.StatusOK
	})
	if s.Input == "" || strings.Contains(s.Input, secret) {
		t.Errorf("run input = %q", s.Input)
	}
}

// TestAnswerParkedQuestion: a run that parked on a permission ask waits in
// the durable inbox; the answer from the console travels over the bus to
// the process serving the agent, which resumes the run.
func TestAnswerParkedQuestion(t *testing.T) {
	st := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	e := newEnv(t, console.Config{Inbox: st, NoLiveQuestions: true, Identity: "grace"})
	a, err := agent.New(e.ctx, agent.Config{Name: "parker", Model: scriptedModel(), Tools: []agent.Tool{deleteTool()},
		Events: e.b, Durable: agent.Durable(st, -1)})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := e.b.ServeAnswers(e.ctx, a, st)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	live := e.sse(t, ctx, "/api/live")
	until(t, live, 10*time.Second, "hello", func(m sseMsg) bool { return m.Event == "hello" })
	ans, err := a.Run(e.ctx, "please delete it")
	if !errors.Is(err, failure.Parked) {
		t.Fatalf("run: %v, want parked", err)
	}
	until(t, live, 10*time.Second, "the parked state", func(m sseMsg) bool {
		l := decodeLive(t, m)
		return l.Kind == "state" && l.Run.ID == ans.Run && l.Run.State == "parked"
	})
	var qs struct{ Questions []console.QuestionView }
	e.do(t, http.MethodGet, "/api/questions", nil, &qs)
	if len(qs.Questions) != 1 || qs.Questions[0].Live || qs.Questions[0].Run != ans.Run || qs.Questions[0].Agent != "parker" {
		t.Fatalf("inbox = %+v", qs.Questions)
	}
	var rec console.AnswerRecord
	if code := e.do(t, http.MethodPost, "/api/questions/"+qs.Questions[0].ID+"/answer", map[string]string{"action": "accept"}, &rec); code != http.StatusOK {
		t.Fatalf("answer: %d", code)
	}
	if rec.By != "grace" || rec.Live {
		t.Errorf("record = %+v", rec)
	}
	until(t, live, 20*time.Second, "the resumed run's end", func(m sseMsg) bool {
		l := decodeLive(t, m)
		return l.Kind == "state" && l.Run.ID == ans.Run && l.Run.State == "done"
	})
}
