package worker

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
)

// stream is one Pool.Stream call: attempts under the policy until a remote
// run ends.
type stream struct {
	p      *Pool
	ctx    context.Context
	input  string
	in     agent.Input // the run's media, instructions and conversation (agent.InputFrom; no Tools)
	yield  func(agent.Event, error) bool
	id     string // the run id of the events the pool adds
	parent *agent.Parent
	seq    int
	// stopped is set once the consumer stopped iterating.
	stopped bool
	handled *failure.Error
	// remoteRun is the id of the remote run an attempt started (from its
	// events): a later attempt resumes it (resume.go).
	remoteRun string
	// lost is the worker the last attempt was lost on, or that handed the
	// run back: a resume need not wait for it (resume.go).
	lost string
}

// terminal is a run's last event and its error.
type terminal struct {
	ev  agent.Event
	err error
}

func (st *stream) run() {
	var term *terminal
	var noWorker error
	err := failure.Or(st.p.policy).Execute(st.ctx, st.p.key, func(ctx context.Context) error {
		if st.stopped {
			return nil
		}
		t, err := st.attemptOrWait(ctx)
		if errors.Is(err, ErrNoWorker) {
			// Found at once and costing nothing to find again, it must not
			// open the pool's circuit: a worker that starts serving later
			// is used at once.
			noWorker = err
			return nil
		}
		if err != nil {
			st.handle(err)
			return err
		}
		term = t
		return nil
	})
	if noWorker != nil && err == nil {
		err = noWorker
	}
	switch {
	case st.stopped:
		return
	case err == nil && term != nil:
		st.yield(term.ev, term.err)
		return
	case err == nil:
		err = &failure.Error{Kind: failure.Internal, Source: failure.SourceBus, Name: st.p.key.Name, Op: "run",
			Message: "the pool's run ended without a final answer or an error"}
	case st.ctx.Err() != nil:
		// Cancelled while waiting to retry.
		err = ctxFailure(st.ctx, st.p.key.Name, "run")
	}
	if fe := failure.From(err); !sameFailure(fe, st.handled) {
		st.handle(fe)
	}
	st.fail(err)
}

// stamp makes an event of the pool's own run.
func (st *stream) stamp(ev agent.Event) agent.Event {
	st.seq++
	ev.Run, ev.Seq, ev.Time, ev.Agent, ev.Parent = st.id, st.seq, time.Now(), st.p.name, st.parent
	return ev
}

// emit yields an event; false once the consumer stopped.
func (st *stream) emit(ev agent.Event) bool {
	if st.stopped {
		return false
	}
	if !st.yield(ev, nil) {
		st.stopped = true
	}
	return !st.stopped
}

// handle passes a failure through the policy and yields it.
func (st *stream) handle(err error) {
	o := failure.Or(st.p.policy).Handle(st.ctx, err)
	st.handled = o.Err
	st.emit(st.stamp(agent.Event{Type: agent.EventFailure, Failure: agent.NewFailureInfo(o)}))
}

// fail yields the pool's own EventRunFailed.
func (st *stream) fail(err error) {
	if !st.stopped {
		st.yield(st.stamp(failedEvent(err)), err)
	}
}

// cancelled ends the stream of a cancelled caller with its failure.
func (st *stream) cancelled(ctx context.Context) *terminal {
	fe := ctxFailure(ctx, st.p.key.Name, "run")
	st.handle(fe)
	return &terminal{ev: st.stamp(failedEvent(fe)), err: fe}
}

// attempt is one job: a start request, then the remote run's messages.
type attempt struct {
	st      *stream
	job     string
	worker  string
	out     *nats.Subscription
	ask     *nats.Subscription
	hdr     nats.Header // the caller's trace context (telemetry.go)
	seq     int64
	started bool // a start request went out: the job may exist

	pingStop, pingDone chan struct{}

	emu     sync.Mutex
	eclosed bool
	ewg     sync.WaitGroup
	ectx    context.Context
	ecancel context.CancelFunc
}

// attempt runs one job. It returns the run's last event, or the failure
// that ended the attempt (handled by the caller, retried by the policy when
// Transient). A cancelled caller or a consumer that stopped is not a
// failure of the pool.
func (st *stream) attempt(ctx context.Context) (*terminal, error) {
	a := &attempt{st: st, job: "job_" + strings.ToLower(rand.Text()[:16])}
	defer a.close()
	if err := a.open(); err != nil {
		return nil, err
	}
	if err := a.start(ctx); err != nil {
		if a.started {
			a.cancelRemote(failure.Canceled, "the pool gave up on the start request")
		}
		if ctx.Err() != nil {
			return st.cancelled(ctx), nil
		}
		return nil, err
	}
	a.pingStop, a.pingDone = make(chan struct{}), make(chan struct{})
	go a.ping()
	return a.follow(ctx)
}

// open subscribes to the job's messages and questions before the start
// request goes out.
func (a *attempt) open() error {
	p := a.st.p
	var err error
	if a.out, err = p.nc.SubscribeSync(p.subj.out(a.job)); err != nil {
		return p.b.Classify(err, "start")
	}
	a.ectx, a.ecancel = context.WithCancel(a.st.ctx)
	if a.ask, err = p.nc.Subscribe(p.subj.elicit(a.job), a.onElicit); err != nil {
		return p.b.Classify(err, "start")
	}
	return nil
}

// close stops the pings, drops the subscriptions and waits for questions
// being answered.
func (a *attempt) close() {
	if a.pingStop != nil {
		close(a.pingStop)
		<-a.pingDone
	}
	for _, sub := range []*nats.Subscription{a.out, a.ask} {
		if sub != nil {
			_ = sub.Unsubscribe()
		}
	}
	a.emu.Lock()
	a.eclosed = true
	a.emu.Unlock()
	if a.ecancel != nil {
		a.ecancel()
	}
	a.ewg.Wait()
}

// onElicit answers a remote question on its own goroutine, owned by the
// attempt (close waits for it).
func (a *attempt) onElicit(msg *nats.Msg) {
	a.emu.Lock()
	defer a.emu.Unlock()
	if a.eclosed {
		return
	}
	a.ewg.Add(1)
	go func() {
		defer a.ewg.Done()
		a.st.p.answerElicitation(a.ectx, msg)
	}()
}

// start sends the start request until a worker takes it. Refusals (busy,
// stopping) are offered to other workers, pausing after a few, for at most
// CapacityWait.
func (a *attempt) start(ctx context.Context) (err error) {
	st, p := a.st, a.st.p
	req := startRequest{Job: a.job, Input: st.input, Parts: st.in.Parts, Instructions: st.in.Instructions, Conversation: st.in.Conversation, Resume: st.remoteRun, Lost: st.lost, HeartbeatMS: p.cfg.Heartbeat.Milliseconds(),
		Missed: p.cfg.MissedHeartbeats, Parent: st.parent}
	if dl, ok := ctx.Deadline(); ok {
		req.DeadlineMS = deadlineMS(dl)
	}
	data := mustJSON(startWire{V: wire.Version, startRequest: req})
	if max := p.nc.MaxPayload(); int64(len(data)) > max {
		return &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceBus, Name: p.name, Op: "start",
			Message: fmt.Sprintf("the run's input is %d bytes on the wire (its parts base64-encoded), over the bus's maximum message size of %d bytes; send large media by URL", len(data), max)}
	}
	capacity := time.Now().Add(p.cfg.CapacityWait)
	pctx, op := telemetry.StartProducer(ctx, telemetry.Messaging{Destination: p.name})
	defer func() { op.End(ctx, kindOf(err)) }()
	a.hdr = traceHeader(pctx)
	for refusals := 0; ; {
		rctx, cancel := context.WithTimeout(ctx, p.cfg.AckTimeout)
		a.started = true
		msg, err := request(rctx, p.nc, p.subj.start, data, a.hdr)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fe := *failure.From(p.b.Classify(err, "start"))
			fe.Name = p.key.Name
			switch {
			case errors.Is(err, nats.ErrNoResponders):
				a.started = false
				fe.Message = fmt.Sprintf("no worker serves %q", p.name)
				fe.Err = fmt.Errorf("%w: %w", ErrNoWorker, err)
			case fe.Kind == failure.Timeout:
				fe.Kind, fe.Retryable, fe.Err = failure.Transient, true, fmt.Errorf("%w: %w", ErrWorkerLost, err)
				fe.Message = fmt.Sprintf("no worker took the run within %s", p.cfg.AckTimeout)
			}
			return &fe
		}
		ack, err := decodeAck(msg.Data)
		switch {
		case err != nil:
			return err
		case ack.Refused != "":
			refusals++
			if time.Now().After(capacity) {
				a.started = false
				return &failure.Error{Kind: failure.Unavailable, Source: failure.SourceBus, Name: p.key.Name, Op: "start",
					Message: fmt.Sprintf("every worker of %q stayed busy for %s", p.name, p.cfg.CapacityWait)}
			}
			if refusals%3 == 0 {
				// Queue groups pick a member at random: after a few
				// refusals, give running jobs time to end.
				pause := min(p.cfg.Heartbeat/2, 100*time.Millisecond)
				pause = pause/2 + mrand.N(pause)
				t := time.NewTimer(pause)
				select {
				case <-ctx.Done():
					t.Stop()
					return ctx.Err()
				case <-t.C:
				}
			}
			continue
		case ack.Error != nil:
			fe := ack.Error.Failure("start")
			fe.Name = p.key.Name
			return fe
		case ack.Job != a.job:
			return protocolError("start", fmt.Errorf("the ack names job %q, not %q", ack.Job, a.job))
		}
		a.worker = ack.Worker
		p.log.Debug().Str("job", a.job).Str("worker", a.worker).Msg("job taken")
		return nil
	}
}

// ping tells the worker the caller is alive, every Heartbeat.
func (a *attempt) ping() {
	defer close(a.pingDone)
	p := a.st.p
	t := time.NewTicker(p.cfg.Heartbeat)
	defer t.Stop()
	data := mustJSON(controlWire{V: wire.Version, control: control{Op: controlPing}})
	subject := p.subj.ctl(a.job)
	for {
		select {
		case <-a.pingStop:
			return
		case <-t.C:
			if err := publish(p.nc, subject, data, a.hdr); err != nil {
				p.log.Debug().Err(err).Str("job", a.job).Msg("ping not sent")
			}
		}
	}
}

// cancelRemote asks the worker to cancel the job (best effort: a worker
// that misses it cancels once the pings stop).
func (a *attempt) cancelRemote(kind failure.Kind, reason string) {
	a.sendCancel(control{Kind: kind, Reason: reason})
}

// sendCancel publishes a cancel of the job.
func (a *attempt) sendCancel(c control) {
	p := a.st.p
	c.Op = controlCancel
	data := mustJSON(controlWire{V: wire.Version, control: c})
	if err := publish(p.nc, p.subj.ctl(a.job), data, a.hdr); err != nil {
		p.log.Debug().Err(err).Str("job", a.job).Msg("cancel not sent")
	}
}

// next waits up to wait for the job's next message. It returns nil, nil
// for a message to skip (repeated, or malformed: handled).
func (a *attempt) next(ctx context.Context, wait time.Duration) (*jobMessage, error) {
	wctx, cancel := context.WithTimeout(ctx, wait)
	msg, err := a.out.NextMsgWithContext(wctx)
	cancel()
	if err != nil {
		return nil, err
	}
	m, err := decodeJobMessage(msg.Data)
	if err != nil {
		a.st.handle(err)
		return nil, nil
	}
	if m.Seq <= a.seq {
		return nil, nil
	}
	if lost := m.Seq - a.seq - 1; lost > 0 {
		a.st.handle(&failure.Error{Kind: failure.Protocol, Source: failure.SourceBus, Name: a.st.p.key.Name, Op: "follow",
			Message: fmt.Sprintf("%d messages of the remote run on worker %s were lost", lost, a.worker)})
	}
	a.seq = m.Seq
	return &m, nil
}

// follow yields the remote run's events until its last one.
func (a *attempt) follow(ctx context.Context) (*terminal, error) {
	st, p := a.st, a.st.p
	limit := p.cfg.Heartbeat * time.Duration(p.cfg.MissedHeartbeats)
	for {
		switch {
		case st.stopped: // while a failure was yielded
			a.cancelRemote(failure.Canceled, "the caller stopped reading the run's events")
			return nil, nil
		case ctx.Err() != nil:
			return a.cancelled(ctx), nil
		}
		m, err := a.next(ctx, limit)
		switch {
		case err != nil && ctx.Err() != nil:
			return a.cancelled(ctx), nil
		case errors.Is(err, context.DeadlineExceeded):
			// Handed over: a durable run stops where it is, and the retry
			// resumes it.
			a.sendCancel(control{Kind: failure.Canceled, Reason: "the pool lost contact with the worker", Handover: true})
			st.lost = a.worker
			return nil, &failure.Error{Kind: failure.Transient, Source: failure.SourceBus, Name: p.key.Name, Op: "follow",
				Retryable: true, Err: ErrWorkerLost,
				Message: fmt.Sprintf("worker %s stopped answering (no heartbeat for %s)", a.worker, limit)}
		case err != nil:
			return nil, p.b.Classify(err, "follow")
		case m == nil || m.Type == messageHeartbeat:
			continue
		}
		if t, err := a.deliver(m); t != nil || err != nil || st.stopped {
			return t, err
		}
	}
}

// deliver yields an event message, or returns the run's last one.
func (a *attempt) deliver(m *jobMessage) (*terminal, error) {
	st, ev := a.st, *m.Event
	st.noteRun(ev)
	switch {
	case ev.Type == agent.EventRunFailed && m.Handover:
		st.lost = a.worker
		return nil, &failure.Error{Kind: failure.Transient, Source: failure.SourceBus, Name: st.p.key.Name, Op: "follow",
			Retryable: true, Err: ErrWorkerLost, Message: fmt.Sprintf("worker %s stopped and handed the run back", a.worker)}
	case ev.Type == agent.EventRunFailed:
		return &terminal{ev: ev, err: remoteError(ev, a.worker)}, nil
	case ev.Type == agent.EventFinal:
		return &terminal{ev: ev}, nil
	}
	if !st.emit(ev) {
		a.cancelRemote(failure.Canceled, "the caller stopped reading the run's events")
	}
	return nil, nil
}

// cancelled cancels the remote run of a cancelled caller and waits up to
// CancelWait for its last events.
func (a *attempt) cancelled(ctx context.Context) *terminal {
	st, p := a.st, a.st.p
	fe := ctxFailure(ctx, p.key.Name, "run")
	kind := failure.Canceled
	if fe.Kind == failure.Timeout {
		kind = failure.Timeout
	}
	a.cancelRemote(kind, fe.Message)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.CancelWait)
	defer cancel()
	for {
		m, err := a.next(wctx, p.cfg.CancelWait)
		switch {
		case err != nil:
			return st.cancelled(ctx)
		case m == nil || m.Type == messageHeartbeat:
			continue
		}
		t, _ := a.deliver(m)
		switch {
		case t != nil && t.err != nil:
			// The remote run confirmed; the error is the caller's own.
			t.err = fe
			return t
		case t != nil:
			return t
		case m.Handover || st.stopped:
			return st.cancelled(ctx)
		}
	}
}
