package store

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// Questions (the inbox) live in <Name>_QUESTIONS under their id.

// PutQuestion records a new question; it lives QuestionTTL past its
// deadline.
func (s *jsStore) PutQuestion(ctx context.Context, q *agent.Question) error {
	if q == nil || q.ID == "" {
		return invalid("put question", "a question needs an id")
	}
	if q.Deadline.IsZero() {
		return invalid("put question", "question "+q.ID+" has no deadline")
	}
	r := *q
	r.V = 1
	if r.Created.IsZero() {
		r.Created = time.Now()
	}
	data, err := s.encodeRecord("question", &r)
	if err != nil {
		return err
	}
	_, err = s.questions.d.put(ctx, storeKey(r.ID), data, 0, s.questionTTL(r.Deadline))
	if errors.Is(err, failure.Conflict) {
		return conflict("question", r.ID, "exists already")
	}
	return err
}

// questionTTL keeps a question QuestionTTL past its deadline (0: forever).
func (s *jsStore) questionTTL(deadline time.Time) time.Duration {
	if s.cfg.QuestionTTL <= 0 {
		return 0
	}
	return max(time.Until(deadline), 0) + s.cfg.QuestionTTL
}

// LoadQuestion returns the question id, answered or not.
func (s *jsStore) LoadQuestion(ctx context.Context, id string) (*agent.Question, error) {
	q, _, err := s.loadQuestion(ctx, id)
	return q, err
}

func (s *jsStore) loadQuestion(ctx context.Context, id string) (*agent.Question, uint64, error) {
	if id == "" {
		return nil, 0, invalid("load question", "the question id is empty")
	}
	data, seq, err := s.questions.d.get(ctx, storeKey(id))
	if errors.Is(err, failure.NotFound) {
		return nil, 0, notFound("question", id)
	}
	if err != nil {
		return nil, 0, err
	}
	q := new(agent.Question)
	if err := json.Unmarshal(data, q); err != nil {
		return nil, 0, protocolError("store load question", err)
	}
	return q, seq, nil
}

// AnswerQuestion records the answer to a pending question: a
// revision-checked write, so of answers racing exactly one is recorded.
func (s *jsStore) AnswerQuestion(ctx context.Context, id string, answer agent.ElicitationResult) (*agent.Question, error) {
	q, seq, err := s.loadQuestion(ctx, id)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	switch {
	case q.Answer != nil:
		return nil, conflict("question", id, "has an answer already")
	case !now.Before(q.Deadline):
		return nil, &failure.Error{Kind: failure.Timeout, Source: failure.SourceBus, Op: "store answer question",
			Message: "question " + id + " passed its deadline unanswered"}
	}
	q.Answer, q.Answered = &answer, now
	data, err := s.encodeRecord("question", q)
	if err != nil {
		return nil, err
	}
	if _, err := s.questions.d.put(ctx, storeKey(id), data, seq, s.questionTTL(now)); err != nil {
		if errors.Is(err, failure.Conflict) {
			return nil, conflict("question", id, "has an answer already")
		}
		return nil, err
	}
	return q, nil
}

// PendingQuestions returns the unanswered questions before their
// deadline, oldest first: the inbox.
func (s *jsStore) PendingQuestions(ctx context.Context) ([]agent.Question, error) {
	now := time.Now()
	all, err := scan[agent.Question](ctx, s.questions, ">", now)
	if err != nil {
		return nil, err
	}
	pending := all[:0]
	for _, q := range all {
		if q.Answer == nil && now.Before(q.Deadline) {
			pending = append(pending, q)
		}
	}
	sort.SliceStable(pending, func(i, j int) bool { return pending[i].Created.Before(pending[j].Created) })
	return pending, nil
}

// DeleteQuestion removes a question.
func (s *jsStore) DeleteQuestion(ctx context.Context, id string) error {
	if id == "" {
		return invalid("delete question", "the question id is empty")
	}
	return s.questions.del(ctx, storeKey(id))
}
