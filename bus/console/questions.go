package console

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// QuestionView is a question waiting for a person, as the inbox shows it:
// live (a run waits on the bus for the console's answer) or parked (in
// Config.Inbox; answering resumes the run where its agent is served).
type QuestionView struct {
	ID       string                `json:"id"`
	Live     bool                  `json:"live"`
	Agent    string                `json:"agent,omitempty"`
	Run      string                `json:"run,omitempty"`
	Call     string                `json:"call,omitempty"`
	Kind     agent.ElicitationKind `json:"kind"`
	Message  string                `json:"message"`
	Tool     string                `json:"tool,omitempty"`
	Args     json.RawMessage       `json:"args,omitempty"`
	Schema   json.RawMessage       `json:"schema,omitempty"`
	URL      string                `json:"url,omitempty"`
	Source   string                `json:"source,omitempty"`
	Created  time.Time             `json:"created"`
	Deadline time.Time             `json:"deadline,omitzero"`
}

// AnswerRecord is the record of an answer given from a console: who
// answered (Config.Identity and the client's address), what, and when. It
// is kept on <prefix>.console.answers.<run>.<question> and logged.
type AnswerRecord struct {
	Question string             `json:"question"`
	Run      string             `json:"run,omitempty"`
	Call     string             `json:"call,omitempty"`
	Live     bool               `json:"live"`
	Action   agent.ElicitAction `json:"action"`
	By       string             `json:"by"`
	From     string             `json:"from,omitempty"`
	Time     time.Time          `json:"time"`
}

// maxLiveQuestions bounds the live questions the console holds at once;
// past it a question is declined with a reason.
const maxLiveQuestions = 256

func viewOf(id string, live bool, e agent.Elicitation) QuestionView {
	return QuestionView{ID: id, Live: live, Run: e.Run, Call: e.Call, Kind: e.Kind, Message: e.Message, Tool: e.Tool,
		Args: e.Args, Schema: e.Schema, URL: e.URL, Source: e.Source.String()}
}

type pending struct {
	view QuestionView
	ch   chan agent.ElicitationResult // buffered 1
}

// liveQuestions answers the bus's questions (it is the elicitor the
// console serves): each waits for an answer from the browser, the asker's
// deadline, or the console's Close.
type liveQuestions struct {
	hub    *hub
	mu     sync.Mutex
	byID   map[string]*pending
	closed bool
}

func newLiveQuestions(h *hub) *liveQuestions {
	return &liveQuestions{hub: h, byID: map[string]*pending{}}
}

// Elicit holds the question until it is answered from the browser.
func (l *liveQuestions) Elicit(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
	id := "lq_" + strings.ToLower(rand.Text()[:16])
	p := &pending{view: viewOf(id, true, e), ch: make(chan agent.ElicitationResult, 1)}
	p.view.Created = time.Now()
	if d, ok := ctx.Deadline(); ok {
		p.view.Deadline = d
	}
	l.mu.Lock()
	switch {
	case l.closed:
		l.mu.Unlock()
		return agent.ElicitationResult{Action: agent.ElicitDecline, Reason: "the console that was asked has closed"}, nil
	case len(l.byID) >= maxLiveQuestions:
		l.mu.Unlock()
		return agent.ElicitationResult{Action: agent.ElicitDecline,
			Reason: fmt.Sprintf("the console holds %d unanswered questions already", maxLiveQuestions)}, nil
	}
	l.byID[id] = p
	l.mu.Unlock()
	view := p.view
	l.hub.publish(topicRuns, liveMsg{Kind: "question", Question: &view})
	defer func() {
		l.mu.Lock()
		delete(l.byID, id)
		l.mu.Unlock()
		l.hub.publish(topicRuns, liveMsg{Kind: "answered", Answer: &AnswerRecord{Question: id, Run: e.Run, Live: true}})
	}()
	select {
	case r := <-p.ch:
		return r, nil
	case <-ctx.Done():
		return agent.ElicitationResult{}, &failure.Error{Kind: failure.KindOf(ctx.Err()), Source: failure.SourceBus,
			Op: "console question", Err: ctx.Err(), Message: "nobody answered the question in the console in time"}
	}
}

// answer hands r to the live question id; NotFound when none waits.
func (l *liveQuestions) answer(id string, r agent.ElicitationResult) (QuestionView, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.byID[id]
	if !ok {
		return QuestionView{}, failure.New(failure.NotFound, failure.SourceBus, fmt.Sprintf("no live question %q waits (answered, expired or gone)", id))
	}
	delete(l.byID, id)
	p.ch <- r
	return p.view, nil
}

func (l *liveQuestions) list() []QuestionView {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]QuestionView, 0, len(l.byID))
	for _, p := range l.byID {
		out = append(out, p.view)
	}
	slices.SortFunc(out, func(a, b QuestionView) int { return a.Created.Compare(b.Created) })
	return out
}

// closeAll declines every waiting question.
func (l *liveQuestions) closeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for id, p := range l.byID {
		p.ch <- agent.ElicitationResult{Action: agent.ElicitDecline, Reason: "the console closed before anyone answered"}
		delete(l.byID, id)
	}
}

// questions lists the live questions, then the parked ones.
func (c *Console) questions(ctx context.Context) ([]QuestionView, error) {
	out := c.live.list()
	if c.cfg.Inbox == nil {
		return out, nil
	}
	qs, err := c.cfg.Inbox.PendingQuestions(ctx)
	if err != nil {
		return out, err
	}
	for _, q := range qs[:min(len(qs), MaxPageSize)] {
		v := viewOf(q.ID, false, q.Elicitation)
		v.Agent, v.Run, v.Created, v.Deadline = q.Agent, q.Run, q.Created, q.Deadline
		out = append(out, v)
	}
	return out, nil
}

// answer answers the question id (live or parked) as who, from the client
// at from, and records it.
func (c *Console) answer(ctx context.Context, id string, r agent.ElicitationResult, from string) (*AnswerRecord, error) {
	switch r.Action {
	case agent.ElicitAccept, agent.ElicitDecline, agent.ElicitCancel:
	default:
		return nil, failure.New(failure.InvalidArgs, failure.SourceBus, fmt.Sprintf("the answer's action is %q; want accept, decline or cancel", r.Action))
	}
	rec := &AnswerRecord{Question: id, Action: r.Action, By: c.cfg.Identity, From: from, Time: time.Now()}
	if strings.HasPrefix(id, "lq_") {
		v, err := c.live.answer(id, r)
		if err != nil {
			return nil, err
		}
		rec.Live, rec.Run, rec.Call = true, v.Run, v.Call
	} else {
		if c.cfg.Inbox == nil {
			return nil, failure.New(failure.NotFound, failure.SourceBus, fmt.Sprintf("no question %q: the console has no inbox", id))
		}
		q, err := c.cfg.Inbox.LoadQuestion(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := c.cfg.Bus.Answer(ctx, q, r); err != nil {
			return nil, err
		}
		rec.Run, rec.Call = q.Run, q.Elicitation.Call
	}
	c.log.Info().Str("question", id).Str("run", rec.Run).Str("action", string(r.Action)).Str("by", rec.By).Str("from", from).Msg("question answered")
	if err := c.ix.recordAnswer(ctx, *rec); err != nil {
		c.pol().Handle(ctx, failure.From(err))
	}
	c.hub.publish(topicRuns, liveMsg{Kind: "answered", Answer: rec})
	return rec, nil
}
