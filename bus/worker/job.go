package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/redact"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
)

// Heartbeat bounds: a request's interval is clamped to them.
const (
	minHeartbeat     = 10 * time.Millisecond
	maxHeartbeat     = time.Minute
	defaultHeartbeat = time.Second
	defaultMissed    = 3
	maxMissed        = 100
)

// jobKey is the context key of the job a run serves (worker.Elicitor).
type jobKey struct{}

// job is one run a worker took.
type job struct {
	s        *Server
	op       *telemetry.Op // the CONSUMER span of the start request (nil: off)
	id       string
	input    string
	in       agent.Input // the media, instructions and conversation of the input (startRequest)
	resume   string
	lost     string // the worker the pool lost this run on (a resume)
	parent   *agent.Parent
	interval time.Duration
	missed   int
	out      string
	elicit   string

	ctx     context.Context
	hdr     nats.Header // the caller's trace context (telemetry.go)
	cancel  context.CancelCauseFunc
	cancelT context.CancelFunc
	ctl     *nats.Subscription
	// slot names the job's durable run after this worker and lists it in
	// the heartbeats (nil for other runners).
	slot *slot
	// lastPing is when the caller last gave a sign of life (Unix ns).
	lastPing atomic.Int64

	mu       sync.Mutex // orders seq with publishing
	seq      int64
	pubFail  bool
	lastRun  string
	lastSeq  int
	terminal bool
}

// newJob builds the job of a start request: its context carries Serve's
// values, the caller's deadline (ending the run with a Timeout), the
// caller's place (agent.WithParent) and the job (for Elicitor).
func (s *Server) newJob(req startRequest) *job {
	j := &job{s: s, id: req.Job, input: req.Input,
		in: agent.Input{Parts: req.Parts, Instructions: req.Instructions, Conversation: req.Conversation}, resume: req.Resume, lost: req.Lost, parent: req.Parent, interval: defaultHeartbeat, missed: defaultMissed,
		out: s.subj.out(req.Job), elicit: s.subj.elicit(req.Job), cancelT: func() {}}
	if req.HeartbeatMS > 0 {
		j.interval = min(max(time.Duration(req.HeartbeatMS)*time.Millisecond, minHeartbeat), maxHeartbeat)
	}
	if req.Missed > 0 {
		j.missed = min(req.Missed, maxMissed)
	}
	ctx, cancel := context.WithCancelCause(s.base)
	if req.DeadlineMS > 0 {
		ctx, j.cancelT = context.WithDeadlineCause(ctx, time.UnixMilli(req.DeadlineMS), &failure.Error{
			Kind: failure.Timeout, Source: failure.SourceBus, Name: s.key, Op: "run",
			Message: "the caller's deadline passed"})
	}
	ctx = context.WithValue(ctx, jobKey{}, j)
	if s.live != nil {
		j.slot = newSlot(wire.Token(s.cfg.Name), wire.Token(s.cfg.ID))
		ctx = agent.WithOwner(ctx, j.slot.take)
	}
	if req.Parent != nil {
		ctx = agent.WithParent(ctx, *req.Parent)
	}
	j.ctx, j.cancel = ctx, cancel
	j.lastPing.Store(time.Now().UnixNano())
	return j
}

// run runs the job's input on the runner, publishing every event, with
// heartbeats in between, until the run's last event.
func (s *Server) run(j *job) {
	defer func() {
		s.completed.Add(1)
		s.end(j)
	}()
	stop, beating := make(chan struct{}), make(chan struct{})
	go j.beat(stop, beating)
	defer func() {
		close(stop)
		<-beating
	}()
	func() {
		defer func() {
			if v := recover(); v != nil {
				j.finish(&failure.Error{Kind: failure.Panic, Source: failure.SourceBus, Name: s.key, Op: "run",
					Err: &failure.PanicError{Value: v}, Message: "the worker's runner crashed"})
			}
		}()
		for ev, err := range s.runEvents(j) {
			switch {
			case j.terminal:
				// A runner that goes on after its last event: ignored.
			case err != nil:
				if ev.Type != agent.EventRunFailed {
					j.finish(err)
					continue
				}
				j.sendTerminal(ev)
			case ev.Type == agent.EventFinal || ev.Type == agent.EventRunFailed:
				j.sendTerminal(ev)
			default:
				j.send(jobMessage{Type: messageEvent, Event: &ev})
			}
		}
		if !j.terminal {
			j.finish(&failure.Error{Kind: failure.Internal, Source: failure.SourceBus, Name: s.key, Op: "run",
				Message: "the run's event stream ended without a final answer or an error"})
		}
	}()
	s.log.Debug().Str("job", j.id).Msg("job ended")
}

// finish closes a run that did not produce its own last event.
func (j *job) finish(err error) {
	if j.terminal {
		return
	}
	ev := failedEvent(err)
	ev.Run, ev.Seq, ev.Time, ev.Agent, ev.Parent = j.lastRun, j.lastSeq+1, time.Now(), j.s.r.Name(), j.parent
	if ev.Run == "" {
		ev.Run = agent.NewRunID()
	}
	j.sendTerminal(ev)
}

// sendTerminal publishes the run's last event; a run given up because the
// worker stops is marked as handed over.
func (j *job) sendTerminal(ev agent.Event) {
	j.terminal = true
	handover := ev.Type == agent.EventRunFailed && context.Cause(j.ctx) == error(j.s.stopCause)
	j.send(jobMessage{Type: messageEvent, Event: &ev, Handover: handover})
	// The last event should leave before the job's subjects are dropped.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = j.s.nc.FlushWithContext(ctx)
}

// send publishes a job message with the next seq.
func (j *job) send(m jobMessage) {
	if m.Event != nil {
		j.lastRun, j.lastSeq = m.Event.Run, m.Event.Seq
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.seq++
	m.Seq = j.seq
	data, err := json.Marshal(jobWire{V: wire.Version, jobMessage: m})
	if m.Event != nil && (err != nil || int64(len(data)) > j.s.nc.MaxPayload()) {
		// An event that does not encode (a tool's invalid raw JSON) or is
		// larger than the server takes: send it cut down.
		j.s.log.Warn().Str("job", j.id).Str("event", string(m.Event.Type)).Int("bytes", len(data)).
			Msg("an event did not encode or was too large; it is sent cut down")
		m.Event = shrink(m.Event)
		data, err = json.Marshal(jobWire{V: wire.Version, jobMessage: m})
	}
	if err == nil {
		err = publish(j.s.nc, j.out, data, j.hdr)
	}
	if err != nil && !j.pubFail {
		// Once per job: the pool notices the silence and retries.
		j.pubFail = true
		failure.Or(j.s.policy).Handle(context.WithoutCancel(j.ctx), &failure.Error{Kind: failure.KindOf(j.s.b.Classify(err, "publish")),
			Source: failure.SourceBus, Name: j.s.key, Op: "publish", Err: err, Message: "a job message could not be sent to the caller"})
	}
}

// beat sends heartbeats and cancels the run when the caller has been
// silent for missed intervals.
func (j *job) beat(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(j.interval)
	defer t.Stop()
	limit := j.interval * time.Duration(j.missed)
	detached := false // the caller is lost; the durable run goes on without it
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			j.send(jobMessage{Type: messageHeartbeat})
			silent := time.Since(time.Unix(0, j.lastPing.Load()))
			if silent > limit && j.ctx.Err() == nil {
				if j.slot != nil {
					// A durable run needs nobody to wait for it: it goes on
					// to its end, recorded in the store (a job following a
					// run another worker took ends when that run does).
					if !detached {
						detached = true
						j.s.log.Info().Str("job", j.id).Str("run", j.slot.taken()).Dur("silent", silent).
							Msg("the caller stopped answering; the durable run goes on without it")
					}
					continue
				}
				err := &failure.Error{Kind: failure.Canceled, Source: failure.SourceBus, Name: j.s.key, Op: "run",
					Message: fmt.Sprintf("the caller stopped answering (silent for %s); the run was cancelled", silent.Round(time.Millisecond))}
				failure.Or(j.s.policy).Handle(context.WithoutCancel(j.ctx), err)
				j.cancel(err)
			}
		}
	}
}

// onControl handles the caller's pings and cancellation.
func (j *job) onControl(msg *nats.Msg) {
	j.lastPing.Store(time.Now().UnixNano())
	c, err := decodeControl(msg.Data)
	if err != nil {
		failure.Or(j.s.policy).Handle(context.WithoutCancel(j.ctx), err)
		return
	}
	if c.Op != controlCancel {
		return
	}
	kind := c.Kind
	if kind != failure.Timeout {
		kind = failure.Canceled
	}
	reason := redact.Redact(c.Reason)
	if reason == "" {
		reason = "the caller cancelled the run"
	}
	j.s.log.Debug().Str("job", j.id).Str("reason", reason).Bool("handover", c.Handover).Msg("job cancelled by its caller")
	cause := &failure.Error{Kind: kind, Source: failure.SourceBus, Name: j.s.key, Op: "run", Message: reason}
	if c.Handover {
		cause.Err = agent.ErrHandover
	}
	j.cancel(cause)
}

// maxShrunkText bounds each text of a cut-down event.
const maxShrunkText = 16 << 10

// shrink cuts an event down to what identifies it and its texts (each
// capped): a result becomes its text, arguments are dropped.
func shrink(ev *agent.Event) *agent.Event {
	cut := func(s string) string {
		if len(s) <= maxShrunkText {
			return s
		}
		return fmt.Sprintf("%s\n[cut: %d of %d bytes sent over the bus]", s[:maxShrunkText], maxShrunkText, len(s))
	}
	cp := agent.Event{Type: ev.Type, Run: ev.Run, Seq: ev.Seq, Time: ev.Time, Turn: ev.Turn, Text: cut(ev.Text),
		Progress: ev.Progress, Failure: ev.Failure, Usage: ev.Usage, Cost: ev.Cost, Toolset: ev.Toolset, Agent: ev.Agent,
		Parent: ev.Parent, Step: ev.Step}
	if ev.Call != nil {
		cp.Call = &agent.CallInfo{ID: ev.Call.ID, Tool: ev.Call.Tool, Source: ev.Call.Source, Elapsed: ev.Call.Elapsed}
	}
	if ev.Result != nil {
		cp.Result = &agent.Result{IsError: ev.Result.IsError, Source: ev.Result.Source,
			Parts: []agent.Part{{Type: agent.PartText, Text: cut(ev.Result.Text())}}}
	}
	if ev.Handoff != nil {
		h := *ev.Handoff
		h.Task, h.Summary = cut(h.Task), cut(h.Summary)
		cp.Handoff = &h
	}
	if ev.Answer != nil {
		a := *ev.Answer
		a.Text = cut(a.Text)
		a.Handoff = cp.Handoff
		cp.Answer = &a
	}
	if ev.Nested != nil {
		cp.Nested = shrink(ev.Nested)
	}
	return &cp
}

// inputCtx is the job's context carrying the media, instructions and
// conversation of its input (agent.WithInput) for a run started anew.
func (j *job) inputCtx() context.Context {
	if len(j.in.Parts) == 0 && j.in.Instructions == "" && j.in.Conversation == "" {
		return j.ctx
	}
	return agent.WithInput(j.ctx, j.in)
}
