package worker

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
)

// ServeConfig configures a worker. The zero value means defaults.
type ServeConfig struct {
	// Name is the pool the worker serves (default: the runner's Name).
	Name string
	// ID names this worker in acks, logs and Pool.Workers (default: the
	// host name, the process id and a random suffix).
	ID string
	// QueueGroup the worker joins (default wire.QueueGroup): each
	// start request goes to one member.
	QueueGroup string
	// MaxConcurrent bounds the runs at once (default 8). A start request
	// beyond it is refused as busy, and the pool offers it to another
	// worker.
	MaxConcurrent int
	// Grace is how long running runs may finish once Serve's ctx ends,
	// before they are cancelled and handed back to their pools, which run
	// them again on other workers (default 0: at once).
	Grace time.Duration
	// ElicitTimeout bounds a question to the caller whose ctx has no
	// deadline (default 10 minutes: a person answers it).
	ElicitTimeout time.Duration
	// OrphanAfter is, for a durable runner (an agent with a run store), how
	// long no worker's heartbeat may list a run of this pool before this
	// worker resumes it as an orphan, once two of its scans saw the run's
	// checkpoint unchanged; parked runs whose questions are all answered or
	// expired are resumed the same way (default 15s; negative: this worker
	// resumes no orphans, but its heartbeats still list its runs). See
	// docs/durability.md.
	OrphanAfter time.Duration
	// OrphanScan is the interval between the worker's scans of the store
	// for orphans, jittered by ±25% (default OrphanAfter/3).
	OrphanScan time.Duration
	// MaxOrphans bounds the orphans this worker resumes at once (default 2;
	// they count against MaxConcurrent).
	MaxOrphans int
	// Policy handles the worker's own failures (nil: failure.Default,
	// asked at each use; not the bus's).
	Policy failure.Policy
	// Logger receives structured logs (nil: none).
	Logger *zerolog.Logger
}

// Stats counts a worker's jobs (Server.Stats).
type Stats struct {
	// Running is the number of runs in progress.
	Running int
	// Accepted, Refused and Completed count start requests taken, start
	// requests refused (busy or stopping), and runs ended (in any way).
	Accepted, Refused, Completed int64
	// Orphans counts the orphaned durable runs this worker resumed (each
	// run once per time it was taken).
	Orphans int64
}

// stopGrace is how long Close waits for cancelled runs to return.
const stopGrace = 5 * time.Second

// Server is a running worker: it takes start requests for one pool name
// and runs them on its Runner. Stop it, or cancel Serve's ctx; stop it
// before closing the Bus.
type Server struct {
	b      *bus.Bus
	nc     *nats.Conn
	r      agent.Runner
	resume resumer           // r, when its runs are durable (resume.go)
	store  *agent.Durability // r's stores, when it is a durable agent
	// live tracks the pool's runs in the workers' heartbeats, and sweep
	// resumes orphans (orphans.go, sweep.go); nil for other runners.
	live   *liveness
	sweep  *sweeper
	cfg    ServeConfig
	subj   subjects
	key    string // "worker/<name>": failures' Name
	log    zerolog.Logger
	policy failure.Policy // Config.Policy; nil: failure.Default at each use

	// base carries Serve's ctx values; cancelled (with stopCause) when
	// Stop gives up waiting for runs.
	base      context.Context
	cancelAll context.CancelCauseFunc
	stopCause *failure.Error
	startSub  *nats.Subscription
	infoSub   *nats.Subscription
	afterStop func() bool

	mu         sync.Mutex
	jobs       map[string]*job
	orphans    map[string]*slot // orphaned runs being resumed here
	stopping   bool
	idle       chan struct{} // closed once stopping and no job runs
	idleClosed bool

	accepted, refused, completed, resumed atomic.Int64

	stopOnce sync.Once
	stopErr  error
	done     chan struct{}
}

// Serve makes r available to pools named cfg.Name (default r.Name()) on b:
// it joins the queue group of <prefix>.work.<name> and runs each start
// request it takes, up to MaxConcurrent at once. ctx's values reach every
// run; when ctx ends the worker stops (see ServeConfig.Grace).
func Serve(ctx context.Context, b *bus.Bus, r agent.Runner, cfg ServeConfig) (*Server, error) {
	if b == nil || r == nil {
		return nil, failure.New(failure.Config, failure.SourceBus, "worker.Serve needs a bus and a runner")
	}
	if cfg.Name == "" {
		cfg.Name = r.Name()
	}
	if cfg.Name == "" {
		return nil, failure.New(failure.Config, failure.SourceBus, "worker.Serve: the runner has no name; set ServeConfig.Name")
	}
	if cfg.ID == "" {
		host, _ := os.Hostname()
		cfg.ID = fmt.Sprintf("%s-%d-%s", wire.Token(host), os.Getpid(), strings.ToLower(rand.Text()[:6]))
	}
	if cfg.QueueGroup == "" {
		cfg.QueueGroup = wire.QueueGroup
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 8
	}
	if cfg.ElicitTimeout <= 0 {
		cfg.ElicitTimeout = 10 * time.Minute
	}
	s := &Server{b: b, nc: b.Conn(), r: r, cfg: cfg, subj: newSubjects(b, cfg.Name), key: "worker/" + cfg.Name,
		log: zerolog.Nop(), policy: cfg.Policy, jobs: map[string]*job{}, orphans: map[string]*slot{}, idle: make(chan struct{}), done: make(chan struct{})}
	if cfg.Logger != nil {
		s.log = *cfg.Logger
	}
	s.resume, s.store = durableRunner(r), storeOf(r)
	s.log = s.log.With().Str("component", "worker").Str("pool", cfg.Name).Str("worker", cfg.ID).Logger()
	s.stopCause = &failure.Error{Kind: failure.Unavailable, Source: failure.SourceBus, Name: s.key, Op: "stop",
		Err: agent.ErrHandover, Message: "the worker is stopping; the run is handed back to its pool"}
	s.base, s.cancelAll = context.WithCancelCause(context.WithoutCancel(ctx))

	var err error
	if s.startSub, err = s.nc.QueueSubscribe(s.subj.start, cfg.QueueGroup, s.onStart); err == nil {
		s.infoSub, err = s.nc.Subscribe(s.subj.info, s.onInfo)
	}
	if err == nil {
		err = s.startDurable()
	}
	if err != nil {
		for _, sub := range []*nats.Subscription{s.startSub, s.infoSub} {
			if sub != nil {
				_ = sub.Unsubscribe()
			}
		}
		s.cancelAll(nil)
		return nil, b.Classify(err, "serve")
	}
	// Return once the server knows the subscriptions, so that a request
	// sent next (from any connection) finds this worker.
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.nc.FlushWithContext(fctx); err != nil {
		s.log.Debug().Err(err).Msg("flush after serving")
	}
	s.afterStop = context.AfterFunc(ctx, func() {
		gctx, cancel := context.WithTimeout(context.Background(), s.cfg.Grace)
		defer cancel()
		_ = s.shutdown(gctx)
	})
	s.log.Debug().Int("max_concurrent", cfg.MaxConcurrent).Msg("worker serving")
	return s, nil
}

// ID is the worker's id.
func (s *Server) ID() string { return s.cfg.ID }

// Done is closed once the worker has stopped and every run has returned.
func (s *Server) Done() <-chan struct{} { return s.done }

// Stats returns the worker's counts.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	running := len(s.jobs) + len(s.orphans)
	s.mu.Unlock()
	return Stats{Running: running, Accepted: s.accepted.Load(), Refused: s.refused.Load(), Completed: s.completed.Load(),
		Orphans: s.resumed.Load()}
}

// Close stops taking start requests (those already delivered are refused,
// so their pools try another worker), lets running runs finish for
// ServeConfig.Grace (and also when the ctx given to Serve ends), then cancels them (their pools run them again
// elsewhere) and waits for them to return, at most 5s more: a run that
// ignores cancellation is abandoned, and reported. Close is idempotent;
// later calls wait for the first.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Grace)
	defer cancel()
	return s.shutdown(ctx)
}

// shutdown is Close with the running runs' grace bounded by ctx.
func (s *Server) shutdown(ctx context.Context) error {
	s.afterStop()
	s.stopOnce.Do(func() {
		defer close(s.done)
		s.stopErr = s.stop(ctx)
	})
	<-s.done
	return s.stopErr
}

func (s *Server) stop(ctx context.Context) error {
	s.mu.Lock()
	s.stopping = true
	s.closeIdleLocked()
	s.mu.Unlock()
	s.sweep.stop() // no new orphans; those being resumed are runs like jobs
	defer s.live.stop()
	// Drain: requests already delivered are answered (refused) before the
	// subscriptions close.
	for _, sub := range []*nats.Subscription{s.startSub, s.infoSub} {
		closed := sub.StatusChanged(nats.SubscriptionClosed)
		if err := sub.Drain(); err != nil {
			continue // the connection is closed: so is the subscription
		}
		select {
		case <-closed:
		case <-time.After(stopGrace):
		}
	}
	var err error
	select {
	case <-s.idle:
	case <-ctx.Done():
		s.cancelAll(s.stopCause)
		select {
		case <-s.idle:
		case <-time.After(stopGrace):
			err = &failure.Error{Kind: failure.Timeout, Source: failure.SourceBus, Name: s.key, Op: "stop",
				Message: fmt.Sprintf("a run ignored cancellation for %s; it was abandoned", stopGrace)}
			failure.Or(s.policy).Handle(context.WithoutCancel(ctx), err)
		}
	}
	s.cancelAll(s.stopCause)
	s.log.Debug().Msg("worker stopped")
	return err
}

// closeIdleLocked closes idle once stopping with no job left.
func (s *Server) closeIdleLocked() {
	if s.stopping && len(s.jobs) == 0 && len(s.orphans) == 0 && !s.idleClosed {
		s.idleClosed = true
		close(s.idle)
	}
}

// respond answers a start request; a failed answer is handled (the pool
// times out and tries another worker).
func (s *Server) respond(msg *nats.Msg, a ack) {
	if msg.Reply == "" {
		return
	}
	if err := msg.Respond(mustJSON(ackWire{V: wire.Version, ack: a})); err != nil {
		failure.Or(s.policy).Handle(s.base, &failure.Error{Kind: failure.KindOf(s.b.Classify(err, "ack")), Source: failure.SourceBus,
			Name: s.key, Op: "ack", Err: err, Message: "an answer to a start request could not be sent"})
	}
}

// onStart takes or refuses a start request (on the subscription's
// goroutine: it only decides and subscribes, the run has its own).
func (s *Server) onStart(msg *nats.Msg) {
	req, err := decodeStart(msg.Data)
	if err != nil {
		failure.Or(s.policy).Handle(s.base, err)
		s.respond(msg, ack{Worker: s.cfg.ID, Error: wire.NewWireError(err)})
		return
	}
	s.mu.Lock()
	var refusal refusal
	var why string
	switch {
	case s.stopping:
		refusal, why = refusedStopping, "the worker is stopping"
	case len(s.jobs)+len(s.orphans) >= s.cfg.MaxConcurrent:
		refusal, why = refusedBusy, fmt.Sprintf("the worker runs %d jobs, its maximum", s.cfg.MaxConcurrent)
	case s.jobs[req.Job] != nil:
		s.mu.Unlock()
		fe := &failure.Error{Kind: failure.Rejected, Source: failure.SourceBus, Name: s.key, Op: "start",
			Message: "the job is already running on this worker"}
		s.respond(msg, ack{Worker: s.cfg.ID, Job: req.Job, Error: wire.NewWireError(fe)})
		return
	}
	if refusal != "" {
		s.mu.Unlock()
		s.refused.Add(1)
		fe := &failure.Error{Kind: failure.Unavailable, Source: failure.SourceBus, Name: s.key, Op: "start", Message: why}
		s.respond(msg, ack{Worker: s.cfg.ID, Job: req.Job, Refused: refusal, Error: wire.NewWireError(fe)})
		return
	}
	j := s.newJob(req)
	j.ctx, j.hdr = telemetry.ExtractHeader(j.ctx, msg.Header), msg.Header // the run continues the caller's trace
	j.ctx, j.op = s.consume(j.ctx)
	s.jobs[j.id] = j
	s.mu.Unlock()

	// The control subscription exists before the ack, so a cancel sent
	// right after it is not missed.
	if j.ctl, err = s.nc.Subscribe(s.subj.ctl(j.id), j.onControl); err != nil {
		fe := failure.From(s.b.Classify(err, "start"))
		s.end(j)
		s.respond(msg, ack{Worker: s.cfg.ID, Job: req.Job, Error: wire.NewWireError(fe)})
		return
	}
	s.accepted.Add(1)
	s.respond(msg, ack{Worker: s.cfg.ID, Job: j.id})
	s.log.Debug().Str("job", j.id).Msg("job accepted")
	go s.run(j)
}

// end forgets a job that ended.
func (s *Server) end(j *job) {
	j.op.End(j.ctx, "")
	if j.ctl != nil {
		_ = j.ctl.Unsubscribe()
	}
	j.cancel(nil)
	j.cancelT()
	s.mu.Lock()
	delete(s.jobs, j.id)
	s.closeIdleLocked()
	s.mu.Unlock()
}

// onInfo answers a pool's Workers question.
func (s *Server) onInfo(msg *nats.Msg) {
	s.mu.Lock()
	info := Info{ID: s.cfg.ID, Name: s.cfg.Name, Running: len(s.jobs) + len(s.orphans), MaxConcurrent: s.cfg.MaxConcurrent, Stopping: s.stopping}
	s.mu.Unlock()
	if msg.Reply != "" {
		if err := msg.Respond(mustJSON(infoWire{V: wire.Version, Info: info})); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			s.log.Debug().Err(err).Msg("info answer not sent")
		}
	}
}
