// Package agent runs LLM agents: a tool-calling loop over a model and the
// tools of any number of toolsets (MCP servers, skills, A2A peers, Go
// functions), with one permission policy and one failure policy.
//
// The package knows interfaces only: llm.Model, Toolset, Tool, EventSink,
// Elicitor. The mcp, skills and a2a packages implement Toolset; the bus
// package implements EventSink and Elicitor.
package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/schema"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
	"github.com/switchboard-dev/switchboard/llm"
)

// Budget bounds a run. Zero fields take the defaults shown; a negative
// value means no limit.
type Budget struct {
	// MaxTurns is the number of model turns in one run (default 25).
	MaxTurns int
	// MaxToolCalls is the number of tool calls in one run (default 200).
	MaxToolCalls int
	// MaxDuration bounds a run's wall time (default 10 minutes).
	MaxDuration time.Duration
	// MaxRunTokens bounds the provider-reported tokens of one run (default: no
	// limit).
	MaxRunTokens int
	// MaxCost bounds the cost of one run's model turns, priced by
	// Config.Prices (default: no limit). It is checked where MaxRunTokens
	// is, and a run past it fails the same way (failure.Budget). New
	// rejects a limit on a model with no price (failure.Config), and a run
	// whose cost cannot be known (its provider reported no usage) fails
	// rather than run unchecked (docs/models.md, "Usage and cost").
	MaxCost llm.USD
}

// Config configures an Agent. Only Model is required; zero values mean
// defaults.
type Config struct {
	// Name and Description identify the agent (A2A agent card, logs).
	Name        string
	Description string
	// Model answers each turn.
	Model llm.Model
	// Instructions is the system prompt. The agent appends the
	// instructions of toolsets that have an Instructions method (the skills
	// catalog) and a note on how tool results are delimited.
	Instructions string
	// Toolsets provide tools. Tool names must be unique across toolsets.
	Toolsets []Toolset
	// Tools are extra local tools, gathered into a toolset named "local".
	Tools []Tool
	// Events receives every run event (the bus's event sink). Optional.
	Events EventSink
	// Elicitor answers permission asks and tools' questions for a person.
	// Without one, every "ask" is declined.
	Elicitor Elicitor
	// Permissions is the permission policy (nil: the default classifier of
	// [Permissions]).
	Permissions *Permissions
	// Policy handles every failure of the agent's runs: the model's turns,
	// its tool calls and what they report (nil: failure.Default, asked at
	// each use, so that failure.SetDefault reaches the agent). Toolsets
	// follow the same rule with the Policy of their own Config; an agent
	// does not hand its policy to them, so for one OnFailure to see every
	// failure, set the process default or give each Config the same policy.
	// A policy without a Logger logs to Logger, which the agent puts in its
	// runs' context.
	Policy failure.Policy
	// Logger receives structured logs (nil: none).
	Logger *zerolog.Logger
	// Budget bounds each run.
	Budget Budget
	// MaxParallel bounds the tool calls of one turn that run at once
	// (default 4).
	MaxParallel int
	// ToolTimeout bounds one tool call (default 2 minutes).
	ToolTimeout time.Duration
	// MaxResultBytes caps the text of one tool result given to the model;
	// the rest is cut with a note (default 100,000).
	MaxResultBytes int
	// MaxTokens caps each model answer (0: provider default).
	MaxTokens int
	// Temperature, if set, is the sampling temperature of every turn
	// (nil: the provider's default).
	Temperature *float64
	// Reasoning, if set, asks the model to reason before each answer (an
	// effort or a token budget; models without reasoning ignore it). The
	// reasoning is kept in the history, as providers need it back, is
	// reported as EventModelReasoning, and is never the answer's text.
	Reasoning *llm.Reasoning
	// NoPromptCache turns prompt caching off: requests ask for no cache
	// breakpoints (llm.Request.NoCache) and carry no cache key. By default
	// each request's CacheKey is the session's conversation id.
	NoPromptCache bool
	// Prices prices the model turns (Answer.Cost, EventModelTurn's Cost,
	// Budget.MaxCost): nil is llm.DefaultPrices(); a table set here
	// replaces it (extend it with llm.DefaultPrices().With(...)).
	Prices llm.Prices
	// Output, if set, asks every run for a typed answer: one JSON value
	// valid against Output.Schema, enforced by the provider where it can
	// (llm.Capabilities.StructuredOutput) and asked for in the system
	// prompt where it cannot, then validated; the value is the Answer's
	// Data. An [Input.Output] replaces it for one run. See
	// docs/typed-answers.md.
	Output *llm.Output
	// OutputRepairs bounds the repair turns of a run whose answer does not
	// match its schema: the model is told what was wrong and answers
	// again, each repair a turn of the Budget (default 2; negative: none).
	OutputRepairs int
	// Guards check the run's input, each tool call, each tool result and
	// the answer ([Guard], package agent/guard; docs/guardrails.md). A
	// trip is a failure of kind failure.Guardrail, handled by the policy
	// like any other: reported to the model, or the end of the run.
	Guards []GuardRule
	// MaxPartBytes caps one media part (an image, audio, a document) given
	// to the model as a part, in a run's Input and in tool results (0: 4
	// MiB; negative: no cap of the agent's own). The model's
	// llm.Capabilities.MaxPartBytes caps it further. A larger part, or one
	// of a kind the model does not accept, reaches the model as text
	// describing it (docs/context.md).
	MaxPartBytes int64
	// Durable keeps sessions, runs and parked questions in stores, so that
	// any process with the same configuration continues them (zero: in
	// memory, as before). See docs/durability.md.
	Durable Durability
	// Context keeps requests inside the model's context window: tool
	// search when tool definitions are big, history compaction when the
	// prompt is (docs/context.md).
	Context ContextConfig
	// Embedder, if set, makes the search for deferred tools (search_tools)
	// rank tools by meaning too: each tool's vector is computed once and
	// cached in memory, the query's at each search, and the ranking is
	// fused with the lexical one ([ToolIndex.WithEmbedder]). An embedder
	// failure leaves that search to the lexical ranking (logged).
	Embedder llm.Embedder
	// Vectors, if set with Embedder, keeps the tools' vectors beyond this
	// process (bus/store.OpenVectors: a JetStream object store), so that
	// replicas sharing it, and the agent's next start, embed each tool once.
	Vectors VectorStore
	// Telemetry configures OpenTelemetry traces and metrics (zero: the
	// global providers; no cost while they are no-ops).
	Telemetry Telemetry
}

// pol is the agent's failure policy: Config.Policy, else the process
// default.
func (a *Agent) pol() failure.Policy { return failure.Or(a.cfg.Policy) }

// execute runs op against the source key under the agent's policy, and
// counts the changes of the source's circuit it sees in the
// switchboard.circuit.state_changes metric: "open" when a call leaves the
// circuit open, "closed" when a call succeeds again.
func (a *Agent) execute(ctx context.Context, key failure.Key, op func(context.Context) error) error {
	p := a.pol()
	err := p.Execute(ctx, key, op)
	if err == nil {
		if _, was := a.openCircuits.LoadAndDelete(key); was {
			a.tel.Get().CircuitChange(key.String(), "closed")
		}
	} else if !p.Available(key) {
		if _, was := a.openCircuits.LoadOrStore(key, struct{}{}); !was {
			a.tel.Get().CircuitChange(key.String(), "open")
		}
	}
	return err
}

// instructor is a toolset with the optional Instructions method (see
// Toolset).
type instructor interface {
	Instructions(ctx context.Context) string
}

// Agent runs conversations. It is safe for concurrent use; each Session is
// one conversation.
type Agent struct {
	cfg Config
	log zerolog.Logger
	// openCircuits holds the sources (failure.Key) whose circuit a call
	// last left open.
	openCircuits sync.Map
	perms        *Permissions
	toolsets     []Toolset
	schemas      *schema.Cache
	// classes caches the default permission classification of tools.
	classes classCache
	// tools is the last tool index and model definitions built, reused by
	// every turn whose toolsets list the same tools (see gatherTools).
	tools atomic.Pointer[toolSnapshot]
	// timeoutErr is the cause of a call that exceeds Config.ToolTimeout
	// (shared: failures are copied before they are changed).
	timeoutErr *failure.Error
	// strays counts the goroutines of abandoned tool calls (tools that
	// ignored their cancellation) still running.
	strays atomic.Int64
	// tel resolves the telemetry providers of each run.
	tel *telemetry.Source
	// guards is the agent's pool of idle guard workers (guard.go), and
	// stopGrace how long a cancelled tool may take to return.
	guards    guardPool
	stopGrace time.Duration
	// deferIx is the tool search index of the last tool snapshot.
	deferIx atomic.Pointer[deferIndex]
	// vectors caches tools' vectors under Config.Embedder.
	vectors toolVectors
	// guardrails is Config.Guards by point (nil without guards).
	guardrails *guardSet
}

// New validates cfg and returns an Agent. It lists every toolset once to
// reject tool-name collisions at wiring time.
func New(ctx context.Context, cfg Config) (*Agent, error) {
	if cfg.Model == nil {
		return nil, failure.New(failure.Config, failure.SourceAgent, "agent.Config.Model is required")
	}
	if err := cfg.Permissions.Validate(); err != nil {
		return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Err: err}
	}
	if err := checkDurability(&cfg.Durable); err != nil {
		return nil, err
	}
	if err := checkPrices(&cfg); err != nil {
		return nil, err
	}
	schemas := schema.NewCache()
	if err := checkOutput(schemas, cfg.Output, "agent.Config.Output"); err != nil {
		return nil, err
	}
	b := &cfg.Budget
	if b.MaxTurns == 0 {
		b.MaxTurns = 25
	}
	if b.MaxToolCalls == 0 {
		b.MaxToolCalls = 200
	}
	if b.MaxDuration == 0 {
		b.MaxDuration = 10 * time.Minute
	}
	if cfg.MaxParallel <= 0 {
		cfg.MaxParallel = 4
	}
	if cfg.ToolTimeout <= 0 {
		cfg.ToolTimeout = 2 * time.Minute
	}
	if cfg.MaxResultBytes <= 0 {
		cfg.MaxResultBytes = 100_000
	}
	if cfg.Name == "" {
		cfg.Name = "switchboard-agent"
	}
	contextDefaults(&cfg.Context)
	gs, err := newGuardSet(cfg.Guards)
	if err != nil {
		return nil, err
	}
	a := &Agent{cfg: cfg, log: zerolog.Nop(), perms: cfg.Permissions, schemas: schemas,
		timeoutErr: callTimeoutErr(cfg.ToolTimeout), stopGrace: stopGrace, guardrails: gs}
	if cfg.Logger != nil {
		a.log = cfg.Logger.Hook(telemetry.LogHook{})
	}
	a.tel = cfg.Telemetry.source()
	a.toolsets = slices.Clone(cfg.Toolsets)
	if len(cfg.Tools) > 0 {
		a.toolsets = append(a.toolsets, NewToolset("local", cfg.Tools...))
	}
	names := map[string]string{}
	for _, ts := range a.toolsets {
		tools, err := ts.Tools(ctx)
		if err != nil {
			return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Name: ts.Name(), Op: "list tools", Err: err}
		}
		for _, t := range tools {
			n := t.Spec().Name
			if n == "" {
				return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Name: ts.Name(), Message: "a tool has an empty name"}
			}
			if other, dup := names[n]; dup {
				return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Tool: n,
					Message: fmt.Sprintf("tool name %q is provided by both toolset %q and toolset %q", n, other, ts.Name())}
			}
			names[n] = ts.Name()
		}
		// New has seen the current list: a change signalled before now is
		// not news to the first run.
		if cn, ok := ts.(changeNotifier); ok {
			select {
			case <-cn.Changed():
			default:
			}
		}
	}
	return a, nil
}

// Name is the agent's name.
func (a *Agent) Name() string { return a.cfg.Name }

// Description is the agent's description.
func (a *Agent) Description() string { return a.cfg.Description }

// Toolsets returns the agent's toolsets (including the "local" one).
func (a *Agent) Toolsets() []Toolset { return slices.Clone(a.toolsets) }

// Answer is the outcome of a successful run.
type Answer struct {
	// Run is the run's id.
	Run string `json:"run"`
	// Text is the model's final answer.
	Text string `json:"text"`
	// Data is the typed answer, when one was asked for (Config.Output,
	// Input.Output): the JSON value of Text (inside its code fence, if the
	// model put it in one), validated against its schema.
	Data json.RawMessage `json:"data,omitempty"`
	// Usage is the provider-reported usage summed over the run's turns.
	Usage llm.Usage `json:"usage"`
	// Cost is what the run's model turns cost, priced by Config.Prices;
	// Cost.Known is false when some turn had no price.
	Cost llm.Cost `json:"cost"`
	// Turns and ToolCalls count what the run did.
	Turns     int `json:"turns,omitempty"`
	ToolCalls int `json:"tool_calls,omitempty"`
	// Failures counts the failures handled during the run.
	Failures int `json:"failures,omitempty"`
	// Elapsed is the run's wall time.
	Elapsed time.Duration `json:"elapsed"`
	// Handoff is set when the run ended by handing the conversation to
	// another agent (see NewHandoffTool); Text is then empty.
	Handoff *Handoff `json:"handoff,omitempty"`
	// Question is the question a parked run waits on (its error is then a
	// failure of kind Parked); Agent.Answer answers it.
	Question string `json:"question,omitempty"`
}

// Run answers input in a new conversation.
func (a *Agent) Run(ctx context.Context, input string) (*Answer, error) {
	return a.NewSession().Run(ctx, input)
}

// Stream answers input in a new conversation, yielding the run's events.
func (a *Agent) Stream(ctx context.Context, input string) iter.Seq2[Event, error] {
	return a.NewSession().Stream(ctx, input)
}

// Session is one conversation: each Run continues it. A Session runs one
// input at a time.
type Session struct {
	a       *Agent
	mu      sync.Mutex
	busy    bool
	history []llm.Message
	grants  grants
	// id names the session in Config.Durable.Sessions ("" without one).
	id string
	// conv is the session's gen_ai.conversation.id when it has no id (no
	// Durable.Sessions): made at its first traced run.
	conv sync.Once
	cid  string
	cx   ctxState
}

// NewSession starts an empty conversation.
func (a *Agent) NewSession() *Session { return &Session{a: a, id: a.newSessionID()} }

// NewSessionFrom continues a conversation saved with History.
func (a *Agent) NewSessionFrom(history []llm.Message) *Session {
	return &Session{a: a, history: slices.Clone(history), id: a.newSessionID()}
}

// History returns a copy of the conversation so far. Every tool call in it
// has exactly one result.
func (s *Session) History() []llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.history)
}

// errBusy is the failure of a Session asked to run while it is running: a
// *failure.Error of kind Conflict (errors.Is(err, failure.Conflict)).
func errBusy() error {
	return failure.New(failure.Conflict, failure.SourceAgent, "session is already running")
}

// Run continues the conversation with input and returns the final answer.
// Its events go to the configured EventSink only: as nobody waits for them,
// the progress of a turn's single call is published to the sink as it
// comes.
func (s *Session) Run(ctx context.Context, input string) (*Answer, error) {
	var ans *Answer
	var err error
	for ev, e := range s.stream(ctx, input, func(a *Answer) { ans = a }) {
		_ = ev
		if e != nil {
			err = e
		}
	}
	if err != nil {
		return ans, err
	}
	return ans, nil
}

// Stream continues the conversation with input, yielding each event as it
// happens. An empty input (without agent.Input parts) on a history that
// ends with tool results continues that history as it is: the model
// answers the results (a conversation whose last calls a client ran). The last pair is either the EventFinal event with a nil error, or
// the EventRunFailed event with the run's error. Stopping the iteration early cancels
// the run; the history still gets a result for every tool call.
func (s *Session) Stream(ctx context.Context, input string) iter.Seq2[Event, error] {
	return s.stream(ctx, input, nil)
}
