package worker

import (
	"context"
	"iter"
	"sort"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
)

// PoolConfig configures a Pool. The zero value means defaults.
type PoolConfig struct {
	// Description says what the pool's runner does (tool descriptions,
	// cards; default: a sentence naming the pool).
	Description string
	// Heartbeat is the interval at which the pool and the worker running
	// its job beat (default 1s); MissedHeartbeats silent intervals (default
	// 3) mean the other side is gone: the pool retries the run on another
	// worker, the worker cancels the run.
	Heartbeat        time.Duration
	MissedHeartbeats int
	// AckTimeout bounds the wait for a worker to take a start request
	// (default 5s); no answer is a Transient failure, retried.
	AckTimeout time.Duration
	// CapacityWait bounds the wait for a worker with free capacity when
	// every worker refuses as busy (default 1 minute, and ctx's deadline);
	// then the run fails as Unavailable.
	CapacityWait time.Duration
	// CancelWait is how long a cancelled Stream waits for the remote run
	// to confirm its end (its last events, with a result for every tool
	// call) before it returns (default 1s: under the 2s an agent waits for
	// a cancelled tool, when the pool is an agent's tool).
	CancelWait time.Duration
	// Elicitor answers the remote run's questions when the pool does not
	// run inside a tool call (agent.CallFromContext), whose elicitor is
	// used first. Nil: such questions are declined.
	Elicitor agent.Elicitor
	// Policy retries lost workers and breaks the pool's circuit under the
	// key {bus, "worker/<name>"}, and handles the pool's failures (nil:
	// failure.Default, asked at each use; not the bus's).
	Policy failure.Policy
	// Logger receives structured logs (nil: none).
	Logger *zerolog.Logger
}

// Pool runs inputs on the workers that serve a name (see Serve). It is an
// agent.Runner; it is safe for concurrent use and holds no resources
// between runs.
type Pool struct {
	b      *bus.Bus
	nc     *nats.Conn
	name   string
	cfg    PoolConfig
	subj   subjects
	key    failure.Key
	policy failure.Policy // Config.Policy; nil: failure.Default at each use
	log    zerolog.Logger
}

var _ agent.Runner = (*Pool)(nil)

// NewPool returns the Runner of the workers serving name on b.
func NewPool(b *bus.Bus, name string, cfg PoolConfig) (*Pool, error) {
	if b == nil || name == "" {
		return nil, failure.New(failure.Config, failure.SourceBus, "worker.NewPool needs a bus and a name")
	}
	if cfg.Description == "" {
		cfg.Description = "Runs " + name + " on a pool of workers over the bus."
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = defaultHeartbeat
	}
	cfg.Heartbeat = min(max(cfg.Heartbeat, minHeartbeat), maxHeartbeat)
	if cfg.MissedHeartbeats <= 0 {
		cfg.MissedHeartbeats = defaultMissed
	}
	cfg.MissedHeartbeats = min(cfg.MissedHeartbeats, maxMissed)
	if cfg.AckTimeout <= 0 {
		cfg.AckTimeout = 5 * time.Second
	}
	if cfg.CapacityWait <= 0 {
		cfg.CapacityWait = time.Minute
	}
	if cfg.CancelWait <= 0 {
		cfg.CancelWait = time.Second
	}
	p := &Pool{b: b, nc: b.Conn(), name: name, cfg: cfg, subj: newSubjects(b, name),
		key: failure.Key{Source: failure.SourceBus, Name: "worker/" + name}, policy: cfg.Policy, log: zerolog.Nop()}
	if cfg.Logger != nil {
		p.log = *cfg.Logger
	}
	p.log = p.log.With().Str("component", "worker-pool").Str("pool", name).Logger()
	return p, nil
}

// Name is the pool's name (the workers' ServeConfig.Name).
func (p *Pool) Name() string { return p.name }

// Description says what the pool's runner does.
func (p *Pool) Description() string { return p.cfg.Description }

// Stream runs input on one of the pool's workers and yields the remote
// run's events as the worker sends them: they carry the remote run's id,
// and Parent is the caller's place (agent.ParentFrom). The last pair
// is the remote EventFinal, or an EventRunFailed with the typed failure.
//
// No worker is Unavailable. A worker that is lost mid-run (no heartbeat,
// no answer to the start request, stopping) is a Transient failure: it is
// handled (an EventFailure is yielded, with the pool's own run id) and the
// input runs again on another worker, under the policy; when the workers
// serve a durable agent (one with a run store), the retry resumes the remote
// run from its checkpoint instead (and, finding no worker, waits for one
// up to CapacityWait). Cancelling ctx or
// stopping the iteration cancels the remote run; after a cancellation the
// stream waits up to CancelWait for the remote run's last events.
func (p *Pool) Stream(ctx context.Context, input string) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		st := &stream{p: p, ctx: ctx, input: input, yield: yield, id: agent.NewRunID()}
		if in, ok := agent.InputFrom(ctx); ok {
			st.in = agent.Input{Parts: in.Parts, Instructions: in.Instructions, Conversation: in.Conversation}
		}
		if parent, ok := agent.ParentFrom(ctx); ok {
			st.parent = &parent
		}
		st.run()
	}
}

// workersWait bounds how long Workers collects answers.
const workersWait = 250 * time.Millisecond

// Workers asks the workers serving the pool's name to describe themselves
// and returns the answers that arrive within 250ms (or before ctx ends),
// sorted by id. No worker is an empty list, not an error.
func (p *Pool) Workers(ctx context.Context) ([]Info, error) {
	ctx, cancel := context.WithTimeout(ctx, workersWait)
	defer cancel()
	inbox := p.nc.NewRespInbox()
	sub, err := p.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, p.b.Classify(err, "workers")
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := p.nc.PublishRequest(p.subj.info, inbox, mustJSON(struct {
		V int `json:"v"`
	}{wire.Version})); err != nil {
		return nil, p.b.Classify(err, "workers")
	}
	var out []Info
	for {
		msg, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			break
		}
		if info, err := decodeWorkerInfo(msg.Data); err == nil {
			out = append(out, info)
		} else {
			failure.Or(p.policy).Handle(ctx, err)
		}
	}
	sort.Slice(out, func(i, k int) bool { return out[i].ID < out[k].ID })
	return out, nil
}
