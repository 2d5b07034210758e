package agent

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
	"github.com/switchboard-dev/switchboard/llm"
)

// Durability makes an agent's sessions, runs and questions for people
// durable: each concern lives in its own store, and any process whose
// agent has the same configuration (its name, model and tools) continues
// them. Each store is optional, in layers: Sessions alone keeps the
// conversations (each run appends its messages at its end; a run is not
// resumable); Runs adds checkpoints and at-most-once calls (Resume), and
// needs Sessions; Inbox adds parking (ParkAfter) and needs Runs. One
// [Store] (such as [NewMemoryStore]'s) serves all three: see [Durable].
// See docs/durability.md for what is stored when, and the guarantees.
type Durability struct {
	// Sessions keeps the conversations (nil: nothing is durable).
	Sessions SessionStore
	// Runs keeps the checkpoints of runs and the records of their calls
	// (nil: runs are not resumable).
	Runs RunStore
	// Inbox keeps the questions parked runs wait on (nil: runs never
	// park).
	Inbox Inbox
	// ParkAfter enables parking (it needs Inbox): a permission ask without
	// an answer from the Elicitor within ParkAfter parks the run (its
	// question goes to the inbox, the run returns a Parked failure and
	// holds no goroutine). Zero never parks (the ask waits as without a
	// store); a negative value parks at once, without asking the Elicitor.
	ParkAfter time.Duration
	// QuestionTTL is how long a parked question waits for its answer
	// (default 24 hours); after it, the run resumes with a Timeout.
	QuestionTTL time.Duration
}

// Durable is the Durability that keeps sessions, runs and questions in st,
// with parking after parkAfter (see [Durability].ParkAfter).
func Durable(st Store, parkAfter time.Duration) Durability {
	return Durability{Sessions: st, Runs: st, Inbox: st, ParkAfter: parkAfter}
}

// storeTimeout bounds every store operation of a run.
const storeTimeout = 30 * time.Second

// durableRun is the durable state of one run attempt.
type durableRun struct {
	runs  RunStore
	owner string
	// cp is the checkpoint as last written, at revision cpRev.
	cp    Checkpoint
	cpRev uint64
	// On resume: the known results and the intents of the pending batch,
	// and the resolved questions of its calls (by call id).
	known   map[string]llm.ToolResult
	intents map[string]CallRecord
	answers map[string]*Question

	mu sync.Mutex
	// intended marks the calls of this attempt that have an intent.
	intended map[string]bool
	// parked lists the questions the current batch parked on, and
	// parkedCalls the calls that asked them (they get no result).
	parked      []string
	parkedCalls map[string]bool
	// carry are the batch's questions answered (or expired) before this
	// attempt, kept in the checkpoint should the batch park again; replay
	// holds the answers to tools' own questions, by call, in order.
	carry  []string
	replay map[string][]*Question
	// halt is the first store failure: the run stops and writes nothing
	// more (it is resumable from its last checkpoint).
	halt error
	// runCtx is the run's context: cancelled with a handover cause, the run
	// halts (durable_owner.go).
	runCtx context.Context
}

// stop records err as the reason the run halts and returns the reason.
func (d *durableRun) stop(err error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halt == nil {
		d.halt = err
	}
	return d.halt
}

func (d *durableRun) halted() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halt == nil {
		d.halt = d.handoverLocked()
	}
	return d.halt
}

func randomID(prefix string) string { return prefix + strings.ToLower(rand.Text()[:16]) }

// newSessionID names a new session of a durable agent.
func (a *Agent) newSessionID() string {
	if a.cfg.Durable.Sessions == nil {
		return ""
	}
	return randomID("ses_")
}

// checkDurability validates and completes cfg.Durable (in New).
func checkDurability(d *Durability) error {
	bad := func(msg string) error { return failure.New(failure.Config, failure.SourceAgent, msg) }
	switch {
	case d.Runs != nil && d.Sessions == nil:
		return bad("agent.Config.Durable.Runs needs Sessions (a run belongs to a stored session)")
	case d.Inbox != nil && d.Runs == nil:
		return bad("agent.Config.Durable.Inbox needs Runs (a parked run resumes from its checkpoint)")
	case d.ParkAfter != 0 && d.Inbox == nil:
		return bad("agent.Config.Durable.ParkAfter needs an Inbox")
	}
	if d.QuestionTTL <= 0 {
		d.QuestionTTL = 24 * time.Hour
	}
	return nil
}

// sessions is the agent's session store (Config error without one).
func (a *Agent) sessions() (SessionStore, error) {
	if a.cfg.Durable.Sessions == nil {
		return nil, failure.New(failure.Config, failure.SourceAgent, "the agent has no agent.Config.Durable.Sessions")
	}
	return a.cfg.Durable.Sessions, nil
}

// runs is the agent's run store (Config error without one).
func (a *Agent) runs() (RunStore, error) {
	if a.cfg.Durable.Runs == nil {
		return nil, failure.New(failure.Config, failure.SourceAgent, "the agent has no agent.Config.Durable.Runs")
	}
	return a.cfg.Durable.Runs, nil
}

// inbox is the agent's question store (Config error without one).
func (a *Agent) inbox() (Inbox, error) {
	if a.cfg.Durable.Inbox == nil {
		return nil, failure.New(failure.Config, failure.SourceAgent, "the agent has no agent.Config.Durable.Inbox")
	}
	return a.cfg.Durable.Inbox, nil
}

// ID is the session's id in the agent's store ("" for an agent without
// one).
func (s *Session) ID() string { return s.id }

// OpenSession opens the stored session id, or starts an empty one by that
// id (it is stored at its first run). Any process whose agent shares the
// store opens the same conversation.
func (a *Agent) OpenSession(ctx context.Context, id string) (*Session, error) {
	st, err := a.sessions()
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, failure.New(failure.InvalidArgs, failure.SourceAgent, "the session id is empty")
	}
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	rec, err := st.LoadSession(sctx, id)
	if errors.Is(err, failure.NotFound) {
		return &Session{a: a, id: id}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := checkVersion("session", id, rec.V); err != nil {
		return nil, err
	}
	s := &Session{a: a, id: id, history: rec.History}
	s.grants.set(rec.Grants)
	return s, nil
}

func checkVersion(what, id string, v int) error {
	if v > recordVersion {
		return &failure.Error{Kind: failure.Config, Source: failure.SourceAgent,
			Message: fmt.Sprintf("%s %q is stored in format version %d; this agent reads up to %d", what, id, v, recordVersion)}
	}
	return nil
}

func (g *grants) set(p []string) {
	g.mu.Lock()
	g.patterns = slices.Clone(p)
	g.mu.Unlock()
}

// storeCtx bounds one store operation; it outlives the run's cancellation
// (a stopped run still records how it ended).
func (r *run) storeCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.sinkCtx, storeTimeout)
}

// durableLoop is a run of a durable session: it takes the session, runs
// the loop with checkpoints, and records how the run ended.
func (r *run) durableLoop(hist []llm.Message, input string) ([]llm.Message, error) {
	stored, err := r.claim(input)
	if err != nil {
		return hist, err
	}
	newHist, err := r.loop(stored, input)
	return r.durableEnd(stored, newHist, len(stored), err)
}

// durableEnd records a run's end: a run that halted (a store failure, a
// lost race) or parked keeps its checkpoint as it is and the session held;
// a failed one is recorded as failed (a successful one was committed
// before its final event). It returns the history the Session keeps.
func (r *run) durableEnd(stored, hist []llm.Message, base int, err error) ([]llm.Message, error) {
	if err == nil {
		return hist, nil
	}
	if r.d.halted() != nil || errors.Is(err, failure.Parked) {
		return stored, err
	}
	d := r.d
	d.cp.State, d.cp.Error = RunFailed, failure.KindOf(err).String()
	d.cp.Messages, d.cp.Results = hist[base:], nil
	r.fillCheckpoint()
	if werr := r.saveCheckpoint(); werr != nil {
		r.a.log.Warn().Err(werr).Str("run", r.id).Msg("the failed run could not be recorded; it stays resumable")
		return stored, err
	}
	if werr := r.finishSession(&d.cp); werr != nil {
		r.a.log.Warn().Err(werr).Str("run", r.id).Msg("the failed run's session could not be updated")
		return stored, err
	}
	return hist, err
}

// claim takes the session for the run (Conflict if another run holds it or
// takes it first) and writes the run's first checkpoint. It returns the
// session's stored history.
func (r *run) claim(input string) ([]llm.Message, error) {
	st, s := r.a.cfg.Durable.Sessions, r.s
	ctx, cancel := r.storeCtx()
	defer cancel()
	rec, err := st.LoadSession(ctx, s.id)
	var rev uint64
	switch {
	case errors.Is(err, failure.NotFound):
		s.mu.Lock()
		rec = &SessionRecord{ID: s.id, Run: r.id, History: slices.Clone(s.history), Grants: s.grants.sessionGrants()}
		s.mu.Unlock()
		rev, err = st.PutSession(ctx, rec, 0)
	case err != nil:
		return nil, err
	default:
		if err := checkVersion("session", s.id, rec.V); err != nil {
			return nil, err
		}
		// Freeing a finished run's session reloads it, and another run may
		// hold it by then.
		for tries := 0; rec.Run != ""; tries++ {
			if tries == 3 {
				return nil, sessionTaken(s.id, failure.Conflict)
			}
			if rec, err = r.freeSession(ctx, rec); err != nil {
				return nil, err
			}
		}
		rev, err = st.AppendSession(ctx, &SessionRecord{ID: s.id, Run: r.id}, rec.Revision)
	}
	if err != nil {
		return nil, sessionTaken(s.id, err)
	}
	s.grants.setFromSession(rec.Grants)
	owner, _ := r.takeOwner()
	r.d = &durableRun{runs: r.a.cfg.Durable.Runs, owner: owner, intended: map[string]bool{}}
	first := []llm.Message{r.userMessage(input)}
	if r.continues(rec.History, input) {
		first = nil
	}
	r.d.cp = Checkpoint{V: recordVersion, Run: r.id, Session: s.id, SessionRevision: rev, Agent: r.a.cfg.Name,
		Owner: r.d.owner, State: RunRunning, Input: input, Output: r.in.Output, Base: len(rec.History),
		Messages: first, Grants: s.grants.snapshot(), Guarded: s.grants.guardedSnapshot(), Started: r.start,
		Trace: telemetry.TraceParent(r.ctx)}
	if rev, err = r.d.runs.SaveCheckpoint(ctx, &r.d.cp, 0); err != nil {
		// Give the session back; if that fails too, the run id's missing
		// checkpoint frees it for the next run. A checkpoint that exists
		// already was written by a run that took the session meanwhile.
		_, _ = st.AppendSession(ctx, &SessionRecord{ID: s.id}, r.d.cp.SessionRevision)
		return nil, sessionTaken(s.id, err)
	}
	r.d.cpRev = rev
	r.watchHandover()
	return rec.History, nil
}

// sessionTaken words a lost race for a session.
func sessionTaken(id string, err error) error {
	if errors.Is(err, failure.Conflict) {
		return &failure.Error{Kind: failure.Conflict, Source: failure.SourceAgent, Op: "take session", Err: err,
			Message: fmt.Sprintf("session %q is being run by another run", id)}
	}
	return err
}

// freeSession handles a session held by rec.Run: a finished run's end is
// recorded in the session, a run whose checkpoint is gone lets go of it,
// and a live (running or parked) one keeps it: Conflict.
func (r *run) freeSession(ctx context.Context, rec *SessionRecord) (*SessionRecord, error) {
	st, runs := r.a.cfg.Durable.Sessions, r.a.cfg.Durable.Runs
	cp, err := runs.LoadCheckpoint(ctx, rec.Run)
	if errors.Is(err, failure.NotFound) {
		// The run is gone, or between its claim and its first checkpoint:
		// creating that checkpoint settles which. If it wins, the run's own
		// first save fails and the run stops; if it loses, the run is live.
		if err = r.abandon(ctx, rec); err == nil {
			return rec, nil
		}
		if errors.Is(err, failure.Conflict) {
			cp, err = runs.LoadCheckpoint(ctx, rec.Run)
		}
	}
	switch {
	case err != nil:
		return nil, err
	case cp.State == RunRunning || cp.State == RunParked:
		return nil, &failure.Error{Kind: failure.Conflict, Source: failure.SourceAgent, Op: "take session",
			Message: fmt.Sprintf("session %q is held by run %q (%s): resume or answer that run first", rec.ID, rec.Run, cp.State)}
	}
	if err := r.finishSession(cp); err != nil {
		return nil, err
	}
	return st.LoadSession(ctx, rec.ID)
}

// abandon records the run that holds rec, and has no checkpoint, as failed
// with Conflict, so that it cannot start after this run takes its session.
func (r *run) abandon(ctx context.Context, rec *SessionRecord) error {
	cp := Checkpoint{V: recordVersion, Run: rec.Run, Session: rec.ID, SessionRevision: rec.Revision,
		Agent: r.a.cfg.Name, State: RunFailed, Error: failure.Conflict.String(), Started: r.start}
	_, err := r.a.cfg.Durable.Runs.SaveCheckpoint(ctx, &cp, 0)
	return err
}

// finishSession appends a finished run's messages to its session and lets
// go of it. A session that no longer holds the run (another process
// recorded its end first) is left as it is.
func (r *run) finishSession(cp *Checkpoint) error {
	st := r.a.cfg.Durable.Sessions
	ctx, cancel := r.storeCtx()
	defer cancel()
	_, err := st.AppendSession(ctx, &SessionRecord{ID: cp.Session, History: cp.Messages, Grants: unguarded(cp.Grants, cp.Guarded)}, cp.SessionRevision)
	if errors.Is(err, failure.Conflict) || errors.Is(err, failure.NotFound) {
		rec, lerr := st.LoadSession(ctx, cp.Session)
		if lerr == nil && rec.Run != cp.Run && rec.Revision > cp.SessionRevision {
			return nil
		}
	}
	return err
}

// fillCheckpoint copies the run's counters into its checkpoint.
func (r *run) fillCheckpoint() {
	cp := &r.d.cp
	cp.Turn, cp.Usage, cp.Cost, cp.ToolCalls, cp.Failures = r.ans.Turns, r.ans.Usage, r.ans.Cost, r.ans.ToolCalls, r.ans.Failures
	cp.Grants, cp.Guarded = r.s.grants.snapshot(), r.s.grants.guardedSnapshot()
	cp.Trace = telemetry.TraceParent(r.ctx)
}

// saveCheckpoint writes the run's checkpoint; a failure halts the run.
func (r *run) saveCheckpoint() error {
	d := r.d
	if err := d.halted(); err != nil {
		return err
	}
	ctx, cancel := r.storeCtx()
	defer cancel()
	rev, err := d.runs.SaveCheckpoint(ctx, &d.cp, d.cpRev)
	if err != nil {
		if errors.Is(err, failure.Conflict) {
			err = &failure.Error{Kind: failure.Conflict, Source: failure.SourceAgent, Op: "checkpoint", Err: err,
				Message: fmt.Sprintf("run %q was taken over by another process; this one stops", r.id)}
		}
		return d.stop(err)
	}
	d.cpRev = rev
	return nil
}

// commit records a successful run before its final event: the checkpoint
// says done (with the answer), then the session gets the run's messages.
func (r *run) commit(hist []llm.Message, base int) error {
	if r.d == nil {
		return r.storeSession(hist, base)
	}
	d := r.d
	r.fillCheckpoint()
	ans := r.ans
	ans.Elapsed = time.Since(r.start)
	d.cp.State, d.cp.Answer, d.cp.Messages, d.cp.Results = RunDone, &ans, hist[base:], nil
	if err := r.saveCheckpoint(); err != nil {
		return err
	}
	if err := r.finishSession(&d.cp); err != nil {
		return d.stop(err)
	}
	return nil
}

// checkpointTurn records a model turn that asked for tool calls.
func (r *run) checkpointTurn(hist []llm.Message, base int) error {
	if r.d == nil {
		return nil
	}
	r.d.cp.Messages, r.d.cp.Results = hist[base:], nil
	r.d.cp.Question, r.d.cp.Questions, r.d.carry = "", nil, nil
	r.fillCheckpoint()
	return r.saveCheckpoint()
}

// halted is the error that stops a durable run after a batch of calls: a
// store failure, or the questions the batch parked on (the run is then
// recorded as parked).
func (r *run) halted() error {
	if r.d == nil {
		return nil
	}
	d := r.d
	if err := d.halted(); err != nil {
		return err
	}
	d.mu.Lock()
	parked := slices.Clone(d.parked)
	d.mu.Unlock()
	if len(parked) == 0 {
		return nil
	}
	d.cp.State, d.cp.Question, d.cp.Questions = RunParked, parked[0], append(slices.Clone(d.carry), parked...)
	d.cp.Failures = r.ans.Failures
	d.cp.Grants, d.cp.Guarded = r.s.grants.snapshot(), r.s.grants.guardedSnapshot()
	if err := r.saveCheckpoint(); err != nil {
		return err
	}
	r.ans.Question = parked[0]
	r.a.log.Info().Str("run", r.id).Str("session", r.s.id).Strs("questions", parked).Msg("run parked")
	return parkedErr(parked)
}

func parkedErr(ids []string) *failure.Error {
	return &failure.Error{Kind: failure.Parked, Source: failure.SourceAgent,
		Message: fmt.Sprintf("the run is parked until a person answers (questions: %s)", strings.Join(ids, ", "))}
}

// sessionRun is the state of a run of a session kept in a SessionStore
// without a RunStore: the revision it read the session at (0: not stored
// yet), and whether its messages are stored.
type sessionRun struct {
	rev    uint64
	stored bool
}

// sessionLoop is a run of a session kept without a RunStore: the run is not
// checkpointed; its messages are appended to the stored session when it
// ends (before its final event), at the revision it read the session at,
// so a session another run changed meanwhile gets a Conflict.
func (r *run) sessionLoop(hist []llm.Message, input string) ([]llm.Message, error) {
	st, s := r.a.cfg.Durable.Sessions, r.s
	ctx, cancel := r.storeCtx()
	rec, err := st.LoadSession(ctx, s.id)
	cancel()
	r.ss = &sessionRun{}
	switch {
	case errors.Is(err, failure.NotFound):
	case err != nil:
		return hist, err
	default:
		if err := checkVersion("session", s.id, rec.V); err != nil {
			return hist, err
		}
		hist, r.ss.rev = rec.History, rec.Revision
		s.grants.setFromSession(rec.Grants)
	}
	newHist, err := r.loop(hist, input)
	if err != nil && !r.ss.stored {
		if werr := r.storeSession(newHist, len(hist)); werr != nil {
			r.a.log.Warn().Err(werr).Str("run", r.id).Msg("the failed run's messages could not be stored in its session")
			return hist, err
		}
	}
	return newHist, err
}

// storeSession appends the run's messages (hist[base:]) to its stored
// session, for a run without a RunStore (a no-op otherwise).
func (r *run) storeSession(hist []llm.Message, base int) error {
	if r.ss == nil || r.ss.stored {
		return nil
	}
	st, s := r.a.cfg.Durable.Sessions, r.s
	ctx, cancel := r.storeCtx()
	defer cancel()
	var err error
	if r.ss.rev == 0 {
		_, err = st.PutSession(ctx, &SessionRecord{V: recordVersion, ID: s.id, History: hist, Grants: s.grants.sessionGrants()}, 0)
	} else {
		_, err = st.AppendSession(ctx, &SessionRecord{ID: s.id, History: hist[base:], Grants: s.grants.sessionGrants()}, r.ss.rev)
	}
	if errors.Is(err, failure.Conflict) {
		return &failure.Error{Kind: failure.Conflict, Source: failure.SourceAgent, Op: "store session", Err: err,
			Message: fmt.Sprintf("session %q changed while this run ran (another run ended first); this run's messages are not stored", s.id)}
	}
	if err == nil {
		r.ss.stored = true
	}
	return err
}
