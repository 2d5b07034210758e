package console

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// Config configures a Console. Only Bus is required; zero values mean the
// defaults shown.
type Config struct {
	// Bus is the bus whose runs the console shows (embedded or external).
	Bus *bus.Bus
	// Runner starts the runs of the chat page (nil: the page cannot start
	// runs).
	Runner agent.Runner
	// Forker re-runs a past run from one of its turns with a changed
	// input, model or prompt (nil: forks of an *agent.Agent Runner keep its
	// model and prompt; without an *agent.Agent, no forks).
	Forker Forker
	// Models are the model names a fork may pick (shown on the fork form).
	Models []string
	// Inbox is the durable inbox of parked questions (nil: only the live
	// questions the console answers itself are shown). Answers to parked
	// questions travel with bus.Bus.Answer to the process serving their
	// agent (bus.Bus.ServeAnswers).
	Inbox agent.Inbox
	// NoLiveQuestions stops the console from answering the questions runs
	// ask over the bus (bus.Bus.ServeElicitation) from the browser.
	NoLiveQuestions bool
	// Token, if set, is required of every request: a bearer Authorization
	// header, or the cookie a link with ?token= sets. Without a token the
	// console answers loopback clients only.
	Token string
	// Identity names who answers questions from this console (recorded
	// with every answer; default "console").
	Identity string
	// PageSize is the number of runs one page of the runs list holds
	// (default 50, at most MaxPageSize).
	PageSize int
	// MaxRunEvents caps the events one run's page receives (default 5000):
	// past it the page says the timeline is cut.
	MaxRunEvents int
	// MaxConcurrentRuns bounds the runs the console starts that run at
	// once (default 8); more are refused with a Budget failure.
	MaxConcurrentRuns int
	// Policy handles the console's failures (nil: failure.Default, asked
	// at each use).
	Policy failure.Policy
	// Logger receives the console's logs, answers included (nil: none).
	Logger *zerolog.Logger
}

// MaxPageSize is the most runs one page of the runs list holds.
const MaxPageSize = 200

// Forker starts a run that re-runs a past one from one of its turns: the
// new run continues History (the past run's input and first Turn turns)
// with the fork's input, on a model and under instructions that may differ
// from the past run's. Its events are those of a Runner's Stream.
type Forker interface {
	Fork(ctx context.Context, f Fork) iter.Seq2[agent.Event, error]
}

// Fork is a request to re-run a past run ([Forker]).
type Fork struct {
	// Parent is the run forked; Turn the number of its model turns kept (0:
	// from its start).
	Parent string `json:"parent"`
	Turn   int    `json:"turn"`
	// History is the conversation up to the fork point, rebuilt from the
	// parent's events (empty at turn 0).
	History []llm.Message `json:"-"`
	// Input is the new run's input: at turn 0 the replacement of the
	// parent's input, later the next user message.
	Input string `json:"input"`
	// Model and Instructions, when set, replace the agent's model (one of
	// Config.Models) and system prompt.
	Model        string `json:"model,omitempty"`
	Instructions string `json:"instructions,omitempty"`
}

// Console is a web developer console over a bus: the runs (live, across
// processes), each run's timeline, the questions waiting for a person, a
// chat that starts runs and forks of past runs. Serve its Handler; Close it
// before the bus.
type Console struct {
	cfg Config
	log zerolog.Logger

	startMu sync.Mutex
	started bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	ix   *index
	hub  *hub
	live *liveQuestions
	runs chan struct{} // a slot per run the console started, running
	mu   sync.Mutex
	stop []func() error
	shut bool
}

// New validates cfg and returns a Console. It does no I/O: Start (or the
// Handler's first request) connects it to the bus.
func New(ctx context.Context, cfg Config) (*Console, error) {
	if cfg.Bus == nil {
		return nil, failure.New(failure.Config, failure.SourceBus, "console.Config.Bus is required")
	}
	if cfg.Identity == "" {
		cfg.Identity = "console"
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = 50
	}
	cfg.PageSize = min(cfg.PageSize, MaxPageSize)
	if cfg.MaxRunEvents <= 0 {
		cfg.MaxRunEvents = 5000
	}
	if cfg.MaxConcurrentRuns <= 0 {
		cfg.MaxConcurrentRuns = 8
	}
	c := &Console{cfg: cfg, log: zerolog.Nop(), runs: make(chan struct{}, cfg.MaxConcurrentRuns)}
	if cfg.Logger != nil {
		c.log = *cfg.Logger
	}
	c.log = c.log.With().Str("component", "console").Logger()
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	c.ctx = c.log.WithContext(c.ctx)
	c.hub = newHub()
	c.ix = newIndex(cfg.Bus, c.hub, &c.log)
	c.live = newLiveQuestions(c.hub)
	return c, nil
}

func (c *Console) pol() failure.Policy { return failure.Or(c.cfg.Policy) }

// Start connects the console to the bus: it creates the console's streams
// (<STREAM>_CONSOLE_RUNS, the index of runs, and <STREAM>_CONSOLE, the
// record of answers), starts following the runs of every process and,
// unless Config.NoLiveQuestions, answers the bus's questions from the
// browser. The Handler calls it at each API request until it succeeds;
// once it has, it returns nil at once. ctx bounds this call only.
func (c *Console) Start(ctx context.Context) error {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	if c.started {
		return nil
	}
	c.mu.Lock()
	shut := c.shut
	c.mu.Unlock()
	if shut {
		return failure.New(failure.Unavailable, failure.SourceBus, "the console is closed")
	}
	if err := c.ix.ensure(ctx); err != nil {
		return err
	}
	if !c.cfg.NoLiveQuestions {
		cl, err := c.cfg.Bus.ServeElicitation(c.ctx, c.live, bus.ServeOptions{Name: "switchboard-console", MaxConcurrent: maxLiveQuestions})
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.stop = append(c.stop, cl.Close)
		c.mu.Unlock()
	}
	if !c.spawn(func() { c.ix.follow(c.ctx) }) {
		return failure.New(failure.Unavailable, failure.SourceBus, "the console is closed")
	}
	c.started = true
	return nil
}

// spawn runs f on a goroutine the console owns (Close waits for it),
// unless the console is closed.
func (c *Console) spawn(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shut {
		return false
	}
	c.wg.Go(f)
	return true
}

// Handler serves the console: the page, its assets and its API.
func (c *Console) Handler() http.Handler { return c.routes() }

// Close stops the console: its live streams, the questions it holds
// (declined, so that their runs go on), the runs it started (cancelled) and
// its goroutines, waiting for them at most 10s.
func (c *Console) Close() error {
	c.mu.Lock()
	if c.shut {
		c.mu.Unlock()
		return nil
	}
	c.shut = true
	stops := c.stop
	c.stop = nil
	c.mu.Unlock()
	c.live.closeAll() // first: the elicitation service waits for its handlers
	var errs []error
	for _, f := range stops {
		errs = append(errs, f())
	}
	c.cancel()
	c.hub.close()
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		errs = append(errs, failure.New(failure.Timeout, failure.SourceBus, "the console's goroutines did not stop within 10s"))
	}
	return errors.Join(errs...)
}
