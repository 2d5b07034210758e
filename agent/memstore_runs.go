package agent

import (
	"context"
	"sort"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
)

func (m *memStore) LoadCheckpoint(_ context.Context, run string) (*Checkpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.runs[run]
	if !r.live(m.o.Now()) {
		return nil, storeErr(failure.NotFound, "load checkpoint", "run %q has no checkpoint", run)
	}
	return decode[Checkpoint]("load checkpoint", r.data)
}

func (m *memStore) SaveCheckpoint(_ context.Context, cp *Checkpoint, expect uint64) (uint64, error) {
	if cp == nil {
		return 0, storeErr(failure.InvalidArgs, "save checkpoint", "the checkpoint is nil")
	}
	if err := needID("save checkpoint", "run", cp.Run); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.o.Now()
	cur := m.runs[cp.Run]
	if err := checkRev("save checkpoint", "the checkpoint of run", cp.Run, cur, now, expect); err != nil {
		return 0, err
	}
	if expect == 0 {
		m.sweep(now, len(m.runs) >= m.o.MaxRuns)
		if len(m.runs) >= m.o.MaxRuns {
			return 0, storeErr(failure.Budget, "save checkpoint", "the store holds %d runs, its limit", m.o.MaxRuns)
		}
		delete(m.calls, cp.Run) // an expired run's leftovers
	}
	c := *cp
	c.V, c.Revision, c.Updated = recordVersion, expect+1, now
	b, err := m.encode("save checkpoint", &c)
	if err != nil {
		return 0, err
	}
	ttl := m.o.RunTTL
	if c.State == RunDone || c.State == RunFailed {
		ttl = m.o.FinishedTTL
	}
	m.runs[c.Run] = &memRec{data: b, rev: c.Revision, expires: expiry(now, ttl)}
	return c.Revision, nil
}

func (m *memStore) ListRuns(context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return liveKeys(m.runs, m.o.Now()), nil
}

func (m *memStore) DeleteRun(_ context.Context, run string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.runs, run)
	delete(m.calls, run)
	return nil
}

func (m *memStore) PutIntent(_ context.Context, c *CallRecord) error {
	if c == nil {
		return storeErr(failure.InvalidArgs, "put intent", "the call record is nil")
	}
	if err := needID("put intent", "run", c.Run); err != nil {
		return err
	}
	if err := needID("put intent", "call", c.Call); err != nil {
		return err
	}
	if c.Result != nil {
		return storeErr(failure.InvalidArgs, "put intent", "an intent has no result yet (call %q)", c.Call)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	calls := m.calls[c.Run]
	for _, x := range calls {
		if x.call == c.Call {
			return storeErr(failure.Conflict, "put intent", "call %q of run %q has an intent already", c.Call, c.Run)
		}
	}
	if len(calls) >= m.o.MaxCallsPerRun {
		return storeErr(failure.Budget, "put intent", "run %q has %d call records, the store's limit", c.Run, m.o.MaxCallsPerRun)
	}
	r := *c
	r.V, r.Started = recordVersion, m.o.Now()
	b, err := m.encode("put intent", &r)
	if err != nil {
		return err
	}
	m.calls[c.Run] = append(calls, memCall{call: c.Call, data: b})
	return nil
}

func (m *memStore) PutCallHandle(_ context.Context, c *CallRecord) error {
	if c == nil || len(c.Handle) == 0 {
		return storeErr(failure.InvalidArgs, "put call handle", "the call record has no handle")
	}
	return m.updateOpenCall("put call handle", c, func(r *CallRecord) { r.Handle = c.Handle })
}

func (m *memStore) PutCallResult(_ context.Context, c *CallRecord) error {
	if c == nil || c.Result == nil {
		return storeErr(failure.InvalidArgs, "put call result", "the call record has no result")
	}
	return m.updateOpenCall("put call result", c, func(r *CallRecord) { r.Result, r.Finished = c.Result, m.o.Now() })
}

// updateOpenCall applies set to the record of c's call, which must have an
// intent and no result yet.
func (m *memStore) updateOpenCall(op string, c *CallRecord, set func(*CallRecord)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	calls := m.calls[c.Run]
	for i, x := range calls {
		if x.call != c.Call {
			continue
		}
		old, err := decode[CallRecord](op, x.data)
		if err != nil {
			return err
		}
		if old.Result != nil {
			return storeErr(failure.Conflict, op, "call %q of run %q has a result already", c.Call, c.Run)
		}
		set(old)
		b, err := m.encode(op, old)
		if err != nil {
			return err
		}
		calls[i].data = b
		return nil
	}
	return storeErr(failure.NotFound, op, "call %q of run %q has no intent", c.Call, c.Run)
}

func (m *memStore) LoadCalls(_ context.Context, run string) ([]CallRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]CallRecord, 0, len(m.calls[run]))
	for _, x := range m.calls[run] {
		c, err := decode[CallRecord]("load calls", x.data)
		if err != nil {
			return nil, err
		}
		out = append(out, *c)
	}
	return out, nil
}

func (m *memStore) PutQuestion(_ context.Context, q *Question) error {
	if q == nil {
		return storeErr(failure.InvalidArgs, "put question", "the question is nil")
	}
	if err := needID("put question", "question", q.ID); err != nil {
		return err
	}
	if q.Deadline.IsZero() {
		return storeErr(failure.InvalidArgs, "put question", "question %q has no deadline", q.ID)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.o.Now()
	if m.questions[q.ID].live(now) {
		return storeErr(failure.Conflict, "put question", "question %q exists already", q.ID)
	}
	m.sweep(now, len(m.questions) >= m.o.MaxQuestions)
	if len(m.questions) >= m.o.MaxQuestions {
		return storeErr(failure.Budget, "put question", "the store holds %d questions, its limit", m.o.MaxQuestions)
	}
	c := *q
	c.V = recordVersion
	if c.Created.IsZero() {
		c.Created = now
	}
	b, err := m.encode("put question", &c)
	if err != nil {
		return err
	}
	m.questions[q.ID] = &memRec{data: b, rev: 1, expires: m.questionExpiry(&c)}
	return nil
}

// questionExpiry keeps a question RunTTL past its deadline, so that the run
// that waits on it can still read why it timed out.
func (m *memStore) questionExpiry(q *Question) time.Time {
	if m.o.RunTTL < 0 {
		return time.Time{}
	}
	return q.Deadline.Add(m.o.RunTTL)
}

func (m *memStore) LoadQuestion(_ context.Context, id string) (*Question, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.questions[id]
	if !r.live(m.o.Now()) {
		return nil, storeErr(failure.NotFound, "load question", "question %q does not exist", id)
	}
	return decode[Question]("load question", r.data)
}

func (m *memStore) AnswerQuestion(_ context.Context, id string, answer ElicitationResult) (*Question, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.o.Now()
	r := m.questions[id]
	if !r.live(now) {
		return nil, storeErr(failure.NotFound, "answer question", "question %q does not exist", id)
	}
	q, err := decode[Question]("answer question", r.data)
	if err != nil {
		return nil, err
	}
	if q.Answer != nil {
		return nil, storeErr(failure.Conflict, "answer question", "question %q has an answer already", id)
	}
	if !now.Before(q.Deadline) {
		return nil, storeErr(failure.Timeout, "answer question", "question %q expired at %s", id, q.Deadline.UTC().Format(time.RFC3339))
	}
	q.Answer, q.Answered = &answer, now
	b, err := m.encode("answer question", q)
	if err != nil {
		return nil, err
	}
	r.data, r.rev = b, r.rev+1
	return q, nil
}

func (m *memStore) PendingQuestions(context.Context) ([]Question, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.o.Now()
	var out []Question
	for _, r := range m.questions {
		if !r.live(now) {
			continue
		}
		q, err := decode[Question]("pending questions", r.data)
		if err != nil {
			return nil, err
		}
		if q.Answer == nil && now.Before(q.Deadline) {
			out = append(out, *q)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

func (m *memStore) DeleteQuestion(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.questions, id)
	return nil
}
