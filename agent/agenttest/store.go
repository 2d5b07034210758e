// Package agenttest is the conformance suite of the stores of
// [agent.Durability]: a store written outside this module (Postgres,
// Redis, …) proves itself with the same tests the memory store and the
// JetStream store run, one entry point per concern, so a store of one
// concern needs nothing else:
//
//	func TestSessions(t *testing.T) {
//		agenttest.RunSessionSuite(t, agenttest.Harness[agent.SessionStore]{
//			New: func(t *testing.T) agent.SessionStore { return newMySessions(t) },
//		})
//	}
//
// [RunRunSuite] tests an [agent.RunStore], [RunInboxSuite] an
// [agent.Inbox], and [RunStoreSuite] all three of an [agent.Store]. Only
// tests import it.
package agenttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// Harness gives the suite stores of type S to test: an [agent.SessionStore],
// [agent.RunStore], [agent.Inbox] or [agent.Store].
type Harness[S any] struct {
	// New returns a fresh, empty store for one test.
	New func(t *testing.T) S
	// Now is the stores' clock (nil: time.Now).
	Now func() time.Time
	// Advance moves the stores' clock by d (nil: time.Sleep(d)).
	Advance func(t *testing.T, d time.Duration)
	// TTLStep is the shortest record TTL the store honours reliably (the
	// expiry tests wait a few of them; default 300 ms).
	TTLStep time.Duration
}

func (h Harness[S]) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h Harness[S]) advance(t *testing.T, d time.Duration) {
	if h.Advance != nil {
		h.Advance(t, d)
		return
	}
	time.Sleep(d)
}

func (h Harness[S]) step() time.Duration {
	if h.TTLStep > 0 {
		return h.TTLStep
	}
	return 300 * time.Millisecond
}

// narrow is h for a concern of its stores.
func narrow[T any, S agent.Store](h Harness[S]) Harness[T] {
	return Harness[T]{New: func(t *testing.T) T { return any(h.New(t)).(T) }, Now: h.Now, Advance: h.Advance, TTLStep: h.TTLStep}
}

// RunStoreSuite runs every test of the suite on a store of all three
// concerns.
func RunStoreSuite(t *testing.T, h Harness[agent.Store]) {
	RunSessionSuite(t, narrow[agent.SessionStore](h))
	RunRunSuite(t, narrow[agent.RunStore](h))
	RunInboxSuite(t, narrow[agent.Inbox](h))
}

// RunSessionSuite runs the tests of a session store: Sessions, SessionRace
// and Expiry.
func RunSessionSuite(t *testing.T, h Harness[agent.SessionStore]) {
	t.Run("Sessions", func(t *testing.T) { Sessions(t, h) })
	t.Run("SessionRace", func(t *testing.T) { SessionRace(t, h) })
	t.Run("Expiry", func(t *testing.T) { Expiry(t, h) })
}

// RunRunSuite runs the tests of a run store: Checkpoints and Calls.
func RunRunSuite(t *testing.T, h Harness[agent.RunStore]) {
	t.Run("Checkpoints", func(t *testing.T) { Checkpoints(t, h) })
	t.Run("Calls", func(t *testing.T) { Calls(t, h) })
}

// RunInboxSuite runs the tests of an inbox: Questions.
func RunInboxSuite(t *testing.T, h Harness[agent.Inbox]) {
	t.Run("Questions", func(t *testing.T) { Questions(t, h) })
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// wantKind fails the test unless err is a *failure.Error of kind k.
func wantKind(t *testing.T, what string, err error, k failure.Kind) {
	t.Helper()
	var fe *failure.Error
	if !errors.As(err, &fe) || !errors.Is(err, k) {
		t.Fatalf("%s: error %v (%T), want a *failure.Error of kind %s", what, err, err, k)
	}
}

// must returns v, failing the test (named what) if err is not nil:
// must(s.LoadSession(c, id))(t, "load").
func must[T any](v T, err error) func(t *testing.T, what string) T {
	return func(t *testing.T, what string) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

func noErr(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func msgs(texts ...string) []llm.Message {
	out := make([]llm.Message, len(texts))
	for i, s := range texts {
		out[i] = llm.Message{Role: llm.RoleUser, Text: s}
	}
	return out
}

func texts(h []llm.Message) []string {
	out := make([]string, len(h))
	for i, m := range h {
		out[i] = m.Text
	}
	return out
}

// Sessions checks create, load, append, replace, list and delete, and the
// revision rules.
func Sessions(t *testing.T, h Harness[agent.SessionStore]) {
	s, c := h.New(t), ctx(t)
	_, err := s.LoadSession(c, "s1")
	wantKind(t, "load of a missing session", err, failure.NotFound)
	_, err = s.PutSession(c, &agent.SessionRecord{}, 0)
	wantKind(t, "put with an empty id", err, failure.InvalidArgs)

	call := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "t", Args: json.RawMessage(`{"a":1}`)}}}
	res := llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "c1", Name: "t", Content: "ok"}}}
	rev := must(s.PutSession(c, &agent.SessionRecord{ID: "s1", History: []llm.Message{msgs("hi")[0], call, res}, Grants: []string{"g1"}}, 0))(t, "create")
	if rev != 1 {
		t.Fatalf("create gave revision %d, want 1", rev)
	}
	_, err = s.PutSession(c, &agent.SessionRecord{ID: "s1"}, 0)
	wantKind(t, "second create", err, failure.Conflict)

	got := must(s.LoadSession(c, "s1"))(t, "load")
	if got.ID != "s1" || got.Revision != 1 || got.V != 1 || len(got.History) != 3 || got.Created.IsZero() || got.Updated.IsZero() {
		t.Fatalf("loaded %+v", got)
	}
	if got.History[1].ToolCalls[0].ID != "c1" || string(got.History[1].ToolCalls[0].Args) != `{"a":1}` ||
		got.History[2].ToolResults[0].Content != "ok" {
		t.Fatalf("history changed in the store: %+v", got.History)
	}

	rev = must(s.AppendSession(c, &agent.SessionRecord{ID: "s1", Run: "r1", History: msgs("a", "b"), Grants: []string{"g1", "g2"}}, 1))(t, "append")
	if rev != 2 {
		t.Fatalf("append gave revision %d, want 2", rev)
	}
	_, err = s.AppendSession(c, &agent.SessionRecord{ID: "s1", History: msgs("x")}, 1)
	wantKind(t, "append at a stale revision", err, failure.Conflict)
	_, err = s.AppendSession(c, &agent.SessionRecord{ID: "nope", History: msgs("x")}, 1)
	wantKind(t, "append to a missing session", err, failure.NotFound)
	got = must(s.LoadSession(c, "s1"))(t, "load after append")
	if !slices.Equal(texts(got.History), []string{"hi", "", "", "a", "b"}) || got.Run != "r1" || got.Revision != 2 ||
		!slices.Equal(got.Grants, []string{"g1", "g2"}) {
		t.Fatalf("after append: history %q run %q revision %d grants %v", texts(got.History), got.Run, got.Revision, got.Grants)
	}

	rev = must(s.PutSession(c, &agent.SessionRecord{ID: "s1", History: msgs("z")}, 2))(t, "replace")
	got = must(s.LoadSession(c, "s1"))(t, "load after replace")
	if rev != 3 || got.Revision != 3 || !slices.Equal(texts(got.History), []string{"z"}) || got.Run != "" || len(got.Grants) != 0 {
		t.Fatalf("after replace (revision %d): %+v", rev, got)
	}
	_, err = s.PutSession(c, &agent.SessionRecord{ID: "s1"}, 2)
	wantKind(t, "replace at a stale revision", err, failure.Conflict)
	_, err = s.PutSession(c, &agent.SessionRecord{ID: "s9"}, 4)
	wantKind(t, "replace of a missing session", err, failure.NotFound)

	must(s.PutSession(c, &agent.SessionRecord{ID: "s2"}, 0))(t, "create s2")
	if ids := must(s.ListSessions(c))(t, "list"); !slices.Equal(ids, []string{"s1", "s2"}) {
		t.Fatalf("list: %v, want [s1 s2]", ids)
	}
	noErr(t, "delete", s.DeleteSession(c, "s1"))
	noErr(t, "delete again", s.DeleteSession(c, "s1"))
	_, err = s.LoadSession(c, "s1")
	wantKind(t, "load after delete", err, failure.NotFound)
	if ids := must(s.ListSessions(c))(t, "list after delete"); !slices.Equal(ids, []string{"s2"}) {
		t.Fatalf("list after delete: %v", ids)
	}
	// A deleted session can be created anew.
	if rev := must(s.PutSession(c, &agent.SessionRecord{ID: "s1"}, 0))(t, "recreate"); rev != 1 {
		t.Fatalf("recreate gave revision %d", rev)
	}
}

// SessionRace checks that writers racing at one revision have exactly one
// winner, and that writers retrying on Conflict lose nothing.
func SessionRace(t *testing.T, h Harness[agent.SessionStore]) {
	s, c := h.New(t), ctx(t)
	must(s.PutSession(c, &agent.SessionRecord{ID: "s"}, 0))(t, "create")
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.AppendSession(c, &agent.SessionRecord{ID: "s", Run: fmt.Sprint("r", i), History: msgs(fmt.Sprint(i))}, 1)
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		} else {
			wantKind(t, "a losing append", err, failure.Conflict)
		}
	}
	got := must(s.LoadSession(c, "s"))(t, "load")
	if wins != 1 || len(got.History) != 1 || got.Run != "r"+got.History[0].Text {
		t.Fatalf("%d winners; history %q, run %q", wins, texts(got.History), got.Run)
	}

	// Writers that reload and retry on Conflict: every message lands once,
	// each writer's in its own order.
	const per = 5
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < per; {
				cur, err := s.LoadSession(c, "s")
				if err != nil {
					errs[i] = err
					return
				}
				_, err = s.AppendSession(c, &agent.SessionRecord{ID: "s", History: msgs(fmt.Sprintf("w%d.%d", i, j))}, cur.Revision)
				switch {
				case err == nil:
					j++
				case errors.Is(err, failure.Conflict):
				default:
					errs[i] = err
					return
				}
			}
			errs[i] = nil
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got = must(s.LoadSession(c, "s"))(t, "load")
	if len(got.History) != 1+n*per || got.Revision != uint64(2+n*per) {
		t.Fatalf("history of %d messages at revision %d, want %d at %d", len(got.History), got.Revision, 1+n*per, 2+n*per)
	}
	next := map[int]int{}
	for _, m := range got.History[1:] {
		var w, j int
		if _, err := fmt.Sscanf(m.Text, "w%d.%d", &w, &j); err != nil || next[w] != j {
			t.Fatalf("message %q out of order (want w%d.%d)", m.Text, w, next[w])
		}
		next[w]++
	}
}

// Checkpoints checks that only the latest checkpoint is kept, under the
// revision rules.
func Checkpoints(t *testing.T, h Harness[agent.RunStore]) {
	s, c := h.New(t), ctx(t)
	_, err := s.LoadCheckpoint(c, "r1")
	wantKind(t, "load of a missing checkpoint", err, failure.NotFound)
	_, err = s.SaveCheckpoint(c, &agent.Checkpoint{}, 0)
	wantKind(t, "save with an empty run", err, failure.InvalidArgs)
	cp := &agent.Checkpoint{Run: "r1", Session: "s1", Agent: "a", Owner: "o1", State: "running", Input: "go",
		Messages: msgs("go"), Turn: 1, Usage: llm.Usage{InputTokens: 3}, Started: h.now()}
	if rev := must(s.SaveCheckpoint(c, cp, 0))(t, "save"); rev != 1 {
		t.Fatalf("first save gave revision %d", rev)
	}
	_, err = s.SaveCheckpoint(c, cp, 0)
	wantKind(t, "second create", err, failure.Conflict)
	cp.Messages, cp.Turn, cp.Results = msgs("go", "more"), 2, []llm.ToolResult{{CallID: "c", Content: "r"}}
	if rev := must(s.SaveCheckpoint(c, cp, 1))(t, "save 2"); rev != 2 {
		t.Fatalf("second save gave revision %d", rev)
	}
	_, err = s.SaveCheckpoint(c, cp, 1)
	wantKind(t, "save at a stale revision", err, failure.Conflict)
	got := must(s.LoadCheckpoint(c, "r1"))(t, "load")
	if got.Revision != 2 || got.V != 1 || got.Turn != 2 || !slices.Equal(texts(got.Messages), []string{"go", "more"}) ||
		len(got.Results) != 1 || got.Usage.InputTokens != 3 || got.Owner != "o1" || got.Updated.IsZero() {
		t.Fatalf("loaded %+v", got)
	}

	// Two resumers taking a run over at the same revision: one wins.
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := *got
			o.Owner = fmt.Sprint("o", i)
			_, errs[i] = s.SaveCheckpoint(c, &o, 2)
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		} else {
			wantKind(t, "a losing takeover", err, failure.Conflict)
		}
	}
	if wins != 1 {
		t.Fatalf("%d takeovers won, want 1", wins)
	}

	must(s.SaveCheckpoint(c, &agent.Checkpoint{Run: "r2", State: "done"}, 0))(t, "save r2")
	if ids := must(s.ListRuns(c))(t, "list"); !slices.Equal(ids, []string{"r1", "r2"}) {
		t.Fatalf("runs: %v", ids)
	}
	noErr(t, "intent", s.PutIntent(c, &agent.CallRecord{Run: "r1", Call: "c1", Tool: "t"}))
	noErr(t, "delete", s.DeleteRun(c, "r1"))
	_, err = s.LoadCheckpoint(c, "r1")
	wantKind(t, "load after delete", err, failure.NotFound)
	if calls := must(s.LoadCalls(c, "r1"))(t, "calls after delete"); len(calls) != 0 {
		t.Fatalf("calls kept after DeleteRun: %+v", calls)
	}
	if ids := must(s.ListRuns(c))(t, "list"); !slices.Equal(ids, []string{"r2"}) {
		t.Fatalf("runs after delete: %v", ids)
	}
}

// Calls checks that a call's intent is written at most once, its handle
// any number of times until its result, and its result at most once after
// it.
func Calls(t *testing.T, h Harness[agent.RunStore]) {
	s, c := h.New(t), ctx(t)
	_, err := s.LoadCalls(c, "r")
	if err != nil {
		t.Fatalf("calls of an unknown run: %v (want none and no error)", err)
	}
	wantKind(t, "intent without a call id", s.PutIntent(c, &agent.CallRecord{Run: "r"}), failure.InvalidArgs)
	res := &llm.ToolResult{CallID: "c1", Name: "pay", Content: "paid"}
	wantKind(t, "result without an intent", s.PutCallResult(c, &agent.CallRecord{Run: "r", Call: "c1", Result: res}), failure.NotFound)

	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.PutIntent(c, &agent.CallRecord{Run: "r", Call: "c1", Tool: "pay", Args: json.RawMessage(`{"n":1}`), Idempotent: false})
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		} else {
			wantKind(t, "a second intent", err, failure.Conflict)
		}
	}
	if wins != 1 {
		t.Fatalf("%d intents of one call recorded, want 1", wins)
	}
	noErr(t, "intent c2", s.PutIntent(c, &agent.CallRecord{Run: "r", Call: "c2", Tool: "mail", Idempotent: true}))
	wantKind(t, "handle without an intent", s.PutCallHandle(c, &agent.CallRecord{Run: "r", Call: "c9", Handle: json.RawMessage(`"t1"`)}), failure.NotFound)
	noErr(t, "handle c1", s.PutCallHandle(c, &agent.CallRecord{Run: "r", Call: "c1", Handle: json.RawMessage(`"t0"`)}))
	noErr(t, "handle c1 replaced", s.PutCallHandle(c, &agent.CallRecord{Run: "r", Call: "c1", Handle: json.RawMessage(`"t1"`)}))
	noErr(t, "handle c2", s.PutCallHandle(c, &agent.CallRecord{Run: "r", Call: "c2", Handle: json.RawMessage(`{"task":"t2"}`)}))
	noErr(t, "result c1", s.PutCallResult(c, &agent.CallRecord{Run: "r", Call: "c1", Result: res}))
	wantKind(t, "second result", s.PutCallResult(c, &agent.CallRecord{Run: "r", Call: "c1", Result: res}), failure.Conflict)
	wantKind(t, "handle after the result", s.PutCallHandle(c, &agent.CallRecord{Run: "r", Call: "c1", Handle: json.RawMessage(`"t3"`)}), failure.Conflict)

	calls := must(s.LoadCalls(c, "r"))(t, "load")
	if len(calls) != 2 || calls[0].Call != "c1" || calls[1].Call != "c2" {
		t.Fatalf("calls: %+v", calls)
	}
	if c1 := calls[0]; c1.Result == nil || c1.Result.Content != "paid" || c1.Tool != "pay" || string(c1.Args) != `{"n":1}` ||
		c1.Started.IsZero() || c1.Finished.IsZero() || c1.V != 1 || string(c1.Handle) != `"t1"` {
		t.Fatalf("call c1: %+v", c1)
	}
	if c2 := calls[1]; c2.Result != nil || !c2.Idempotent || !c2.Finished.IsZero() || string(c2.Handle) != `{"task":"t2"}` {
		t.Fatalf("call c2 (in flight): %+v", c2)
	}
	if other := must(s.LoadCalls(c, "r-other"))(t, "other run"); len(other) != 0 {
		t.Fatalf("another run's calls: %+v", other)
	}
}

// Questions checks the inbox: pending questions, answered once, before
// their deadline.
func Questions(t *testing.T, h Harness[agent.Inbox]) {
	s, c := h.New(t), ctx(t)
	now := h.now()
	_, err := s.LoadQuestion(c, "q1")
	wantKind(t, "load of a missing question", err, failure.NotFound)
	wantKind(t, "question without a deadline", s.PutQuestion(c, &agent.Question{ID: "qx"}), failure.InvalidArgs)
	q := &agent.Question{ID: "q1", Agent: "a", Session: "s", Run: "r", Created: now, Deadline: now.Add(time.Hour),
		Elicitation: agent.Elicitation{Kind: agent.ElicitPermission, Tool: "pay", Message: "May I pay?", Call: "c1"}}
	noErr(t, "put", s.PutQuestion(c, q))
	wantKind(t, "second put", s.PutQuestion(c, q), failure.Conflict)
	q2 := *q
	q2.ID, q2.Created = "q2", now.Add(time.Millisecond)
	noErr(t, "put q2", s.PutQuestion(c, &q2))
	short := *q
	short.ID, short.Created, short.Deadline = "q3", now.Add(2*time.Millisecond), now.Add(h.step())
	noErr(t, "put q3", s.PutQuestion(c, &short))

	pend := must(s.PendingQuestions(c))(t, "pending")
	if len(pend) != 3 || pend[0].ID != "q1" || pend[1].ID != "q2" || pend[0].Elicitation.Tool != "pay" || pend[0].V != 1 {
		t.Fatalf("pending: %+v", pend)
	}

	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.AnswerQuestion(c, "q1", agent.ElicitationResult{Action: agent.ElicitAccept, Reason: fmt.Sprint(i)})
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		} else {
			wantKind(t, "a second answer", err, failure.Conflict)
		}
	}
	if wins != 1 {
		t.Fatalf("%d answers recorded, want 1", wins)
	}
	got := must(s.LoadQuestion(c, "q1"))(t, "load answered")
	if got.Answer == nil || got.Answer.Action != agent.ElicitAccept || got.Answered.IsZero() {
		t.Fatalf("answered question: %+v", got)
	}
	_, err = s.AnswerQuestion(c, "nope", agent.ElicitationResult{Action: agent.ElicitDecline})
	wantKind(t, "answer to a missing question", err, failure.NotFound)

	h.advance(t, 2*h.step())
	_, err = s.AnswerQuestion(c, "q3", agent.ElicitationResult{Action: agent.ElicitAccept})
	wantKind(t, "answer after the deadline", err, failure.Timeout)
	if late := must(s.LoadQuestion(c, "q3"))(t, "load expired"); late.Answer != nil {
		t.Fatalf("an expired question took an answer: %+v", late)
	}
	pend = must(s.PendingQuestions(c))(t, "pending after")
	if len(pend) != 1 || pend[0].ID != "q2" {
		t.Fatalf("pending after answering q1 and q3 expiring: %+v", pend)
	}
	noErr(t, "delete", s.DeleteQuestion(c, "q2"))
	noErr(t, "delete again", s.DeleteQuestion(c, "q2"))
	if pend = must(s.PendingQuestions(c))(t, "pending after delete"); len(pend) != 0 {
		t.Fatalf("pending after delete: %+v", pend)
	}
}

// Expiry checks that a session with a TTL disappears after it, and that a
// write renews it.
func Expiry(t *testing.T, h Harness[agent.SessionStore]) {
	s, c := h.New(t), ctx(t)
	ttl := 2 * h.step()
	must(s.PutSession(c, &agent.SessionRecord{ID: "short", TTL: ttl}, 0))(t, "create short")
	must(s.PutSession(c, &agent.SessionRecord{ID: "renewed", TTL: ttl}, 0))(t, "create renewed")
	must(s.PutSession(c, &agent.SessionRecord{ID: "long", TTL: time.Hour}, 0))(t, "create long")
	got := must(s.LoadSession(c, "short"))(t, "load")
	if got.Expires.Before(got.Updated.Add(ttl - time.Millisecond)) {
		t.Fatalf("expires %s, updated %s, ttl %s", got.Expires, got.Updated, ttl)
	}
	h.advance(t, h.step())
	must(s.AppendSession(c, &agent.SessionRecord{ID: "renewed", History: msgs("x")}, 1))(t, "renew")
	h.advance(t, h.step()+h.step()/2)
	_, err := s.LoadSession(c, "short")
	wantKind(t, "load after expiry", err, failure.NotFound)
	must(s.LoadSession(c, "renewed"))(t, "load renewed")
	if ids := must(s.ListSessions(c))(t, "list"); !slices.Equal(ids, []string{"long", "renewed"}) {
		t.Fatalf("sessions after expiry: %v", ids)
	}
	// An expired session's id can be taken anew.
	if rev := must(s.PutSession(c, &agent.SessionRecord{ID: "short"}, 0))(t, "recreate"); rev != 1 {
		t.Fatalf("recreate after expiry gave revision %d", rev)
	}
}
