package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
	"golang.org/x/time/rate"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
	"github.com/switchboard-dev/switchboard/mcp"
	"github.com/switchboard-dev/switchboard/skills"
)

// Config configures a Server. Zero values mean the defaults shown.
type Config struct {
	// Name and Version are the server's implementation info (default
	// "switchboard", "dev").
	Name, Version string
	// Instructions are sent to clients at initialization.
	Instructions string
	// Toolsets are offered as tools, under the names their tools have.
	// Names must be unique: a second tool of the same name is hidden and
	// logged.
	Toolsets []agent.Toolset
	// Servers, when set, are MCP servers fronted transparently: each of
	// their tools offered with its own definition (title, icons,
	// annotations, output schema, _meta) and results unchanged (content,
	// structuredContent, _meta), and their resources, resource templates,
	// prompts, completion, resource subscriptions and log messages routed
	// to and from the server they belong to; each session's initialize
	// declares the extensions (the MCP Apps extension,
	// io.modelcontextprotocol/ui) of the servers connected then. Do not
	// also put Servers.Toolset() in Toolsets. Give the Manager
	// the OnLog and OnResourceUpdated of Client ([Client.Log],
	// [Client.ResourceUpdated]) so that log messages and resource updates
	// reach the clients. See docs/gateway.md.
	Servers *mcp.Manager
	// Prefix says whether the names of what Servers offer carry their
	// server's name (PrefixAuto: when there are several servers).
	Prefix Prefix
	// Runners are offered as tools taking one string, "input" (see
	// agent.AsTool), named by the runner.
	Runners []agent.Runner
	// Skills, when set, are also offered as prompts (one per skill, its
	// instructions) and their bundled files as resources
	// (skill://<skill>/<path>). Offer the toolset in Toolsets too for the
	// skill tools.
	Skills *skills.Toolset
	// FindAndCall, when set, lists two tools instead of every tool served:
	// find_tools, which searches the served tools (agent.ToolIndex) and
	// answers with their definitions, and call_tool, which calls one by
	// name as a tools/call of it would be (permissions, guards, limits,
	// timeouts and audit apply; a denied tool is neither found nor
	// called). See docs/gateway.md.
	FindAndCall bool
	// Permissions is the permission policy applied to listing and calls
	// (nil: the default classification, as in an agent: reads allowed,
	// writes asked, command execution denied). A denied tool is not
	// listed and is refused; an "ask" asks the client (elicitation) and is
	// refused when the client cannot be asked.
	Permissions *agent.Permissions
	// CallTimeout bounds one tools/call when the tool's spec sets no
	// Timeout (default 2 minutes).
	CallTimeout time.Duration
	// RateLimit is each client's sustained tools/call rate (0: no limit);
	// RateBurst its burst (default 1 + RateLimit). A client is the token's
	// subject on HTTP with auth, else the session.
	RateLimit rate.Limit
	RateBurst int
	// MaxClients bounds the rate limiters kept (default 10,000; the least
	// recently used is dropped first).
	MaxClients int
	// Audit, when set, receives a record of every tools/call, after it
	// ended (also refused ones). It runs on the call's goroutine: it must
	// not block for long.
	Audit func(ctx context.Context, rec AuditRecord)
	// Guards are applied to every tool call the server serves, from every
	// toolset it fronts (the gateway's downstream MCP servers included):
	// rules at agent.GuardToolCall check the arguments before the call,
	// rules at agent.GuardToolResult its result before the client sees
	// it; a trip answers the client with an error result
	// (docs/guardrails.md). Other points do not apply here.
	Guards []agent.GuardRule
	// TokenVerifier, when set, makes Handler require a bearer token
	// verified by it (OAuth 2.1 resource server: it must check the
	// token's audience). AuthOptions are passed to
	// auth.RequireBearerToken (resource metadata URL, scopes).
	TokenVerifier auth.TokenVerifier
	AuthOptions   *auth.RequireBearerTokenOptions
	// AllowedOrigins are the browser origins Handler accepts besides the
	// server's own (cross-origin protection); requests without an Origin
	// (non-browser clients) are accepted.
	AllowedOrigins []string
	// Stateless serves Streamable HTTP without sessions: each request is
	// served alone, so replicas need no affinity, but server-to-client
	// requests (elicitation, sampling) are refused (see docs/gateway.md).
	Stateless bool
	// MCPOptions are go-sdk's server options (completion and subscription
	// handlers, keepalive, ...), for what Server.MCP adds; Instructions
	// above wins over theirs.
	MCPOptions *gomcp.ServerOptions
	// Client reaches the MCP client of the calls being served (their
	// person and model) for what the server serves: give the same Client's
	// Elicitor and Sampler to sources built before the server, such as an
	// mcp.Manager (nil: a Client of the server's own, see
	// [Server.Elicitor]).
	Client *Client
	// Policy runs every tool call (retries, a circuit per source) and
	// handles its failures (nil: failure.Default, asked at each use). A
	// policy without a Logger logs the calls' failures to Logger.
	Policy failure.Policy
	// Logger receives structured logs (nil: none).
	Logger *zerolog.Logger
	// Tasks, when set, lets the Runners answer with MCP tasks (the
	// io.modelcontextprotocol/tasks extension, declared then): a
	// tools/call of a Runner from a client that declared the extension is
	// answered at once with a task, recorded in Tasks, while the run goes
	// on; the client polls tasks/get (also after reconnecting, from any
	// replica sharing the store), answers the run's questions through
	// tasks/update and cancels it with tasks/cancel. bus/store.OpenAgent
	// gives a JetStream RunStore. See docs/tasks.md.
	Tasks agent.RunStore
	// TaskPoll is the polling interval a task suggests to its client
	// (pollIntervalMs); 0 means 500 ms. A client that listens for the
	// task's status notifications over Streamable HTTP (docs/tasks.md)
	// learns of its changes at once, so a server may suggest a long one.
	TaskPoll time.Duration
	// Telemetry makes the spans of the requests served (a SERVER span each,
	// continuing the caller's trace) and is handed to what they call (a
	// served agent's runs, a gateway's calls downstream); the zero value
	// uses otel's global providers.
	Telemetry agent.Telemetry
}

// Server is an MCP server offering toolsets and runners. It is safe for
// concurrent use by any number of sessions.
type Server struct {
	cfg    Config
	log    zerolog.Logger
	policy failure.Policy // Config.Policy; nil: failure.Default at each use
	guards *agent.Guards  // Config.Guards (nil without)
	mcp    *gomcp.Server
	tools  *toolRegistry
	limits *limiters
	// client finds the client link of a question; inflight is its map of
	// the run id of each call being served to its session.
	client   *Client
	inflight *sync.Map
	// userAudit is Config.Audit; audits are the receivers of call
	// records added by AddAudit (cfg.Audit calls them all).
	userAudit func(context.Context, AuditRecord)
	audits    atomic.Pointer[[]func(context.Context, AuditRecord)]
	// pending are the calls of multi round-trip sessions waiting for the
	// client's retry, by requestState (npending counts them).
	pending  sync.Map
	npending atomic.Int64
	// runnerTools names the Runners' tools when Config.Tasks is set (nil
	// without); tasks are the tasks whose runs go on in this process, by
	// id (nlive counts them). See tasks.go.
	runnerTools map[string]bool
	tasks       sync.Map
	nlive       atomic.Int64
	// events keeps the recent events of every stateful HTTP session's
	// streams, so that a client whose stream was cut resumes it.
	events *gomcp.MemoryEventStore
	// fronted routes what Config.Servers offer besides tools (nil without
	// Servers).
	fronted *fronted
	// tel resolves Config.Telemetry.
	tel *telemetry.Source

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New builds a Server: it lists every toolset once (a toolset that fails
// to list is logged and retried at the next tools/list) and watches the
// toolsets that have the optional Changed method of an agent.Toolset. Close stops the watching.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Name == "" {
		cfg.Name = "switchboard"
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 2 * time.Minute
	}
	if cfg.Permissions != nil {
		if err := cfg.Permissions.Validate(); err != nil {
			return nil, failure.Wrap(failure.Config, failure.SourceMCP, fmt.Errorf("server: Permissions: %w", err))
		}
	}
	if cfg.RateLimit < 0 || cfg.RateBurst < 0 || cfg.MaxClients < 0 {
		return nil, failure.New(failure.Config, failure.SourceMCP, "server: RateLimit, RateBurst and MaxClients must not be negative")
	}
	for _, o := range cfg.AllowedOrigins {
		if err := http.NewCrossOriginProtection().AddTrustedOrigin(o); err != nil {
			return nil, failure.Wrap(failure.Config, failure.SourceMCP, fmt.Errorf("server: AllowedOrigins: %w", err))
		}
	}
	if cfg.Client == nil {
		cfg.Client = new(Client)
	}
	s := &Server{cfg: cfg, log: zerolog.Nop(), client: cfg.Client, inflight: &cfg.Client.inflight, events: gomcp.NewMemoryEventStore(nil),
		userAudit: cfg.Audit, tel: telemetry.NewSource(cfg.Telemetry.TracerProvider, cfg.Telemetry.MeterProvider, cfg.Telemetry.RecordContent)}
	s.cfg.Audit = s.audit
	if cfg.Logger != nil {
		s.log = cfg.Logger.With().Str("component", "mcp-server").Logger()
	}
	s.policy = cfg.Policy
	guards, gerr := agent.NewGuards(cfg.Guards)
	if gerr != nil {
		return nil, gerr
	}
	s.guards = guards
	s.limits = newLimiters(cfg.RateLimit, cfg.RateBurst, cfg.MaxClients)
	var opts gomcp.ServerOptions
	if cfg.MCPOptions != nil {
		opts = *cfg.MCPOptions
	}
	if cfg.Instructions != "" {
		opts.Instructions = cfg.Instructions
	}
	opts.HasTools = true
	if cfg.Servers != nil {
		s.fronted = newFronted(s, cfg.Servers, cfg.Prefix)
		s.fronted.configure(&opts)
	}
	if cfg.Skills != nil {
		declareSkills(&opts)
	}
	if cfg.Tasks != nil && len(cfg.Runners) > 0 {
		s.runnerTools = map[string]bool{}
		for _, r := range cfg.Runners {
			if t, err := agent.AsTool(r, nil); err == nil {
				s.runnerTools[t.Spec().Name] = true
			}
		}
		s.offerTasks(&opts)
	}
	s.mcp = gomcp.NewServer(&gomcp.Implementation{Name: cfg.Name, Version: cfg.Version}, &opts)
	if s.runnerTools != nil {
		if err := s.addTaskMethods(); err != nil {
			return nil, failure.Wrap(failure.Internal, failure.SourceMCP, err)
		}
	}
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	var err error
	if s.tools, err = newToolRegistry(s); err != nil {
		s.cancel()
		return nil, err
	}
	if cfg.FindAndCall {
		s.offerFindAndCall()
	}
	s.mcp.AddReceivingMiddleware(s.traced, s.middleware)
	if s.runnerTools != nil {
		s.mcp.AddReceivingMiddleware(s.taskMiddleware)
	}
	s.tools.sync(ctx)
	if s.fronted != nil {
		s.fronted.sync(ctx)
	}
	cfg.Client.srv.Store(s)
	s.watch()
	if cfg.Skills != nil {
		s.offerSkills(ctx)
	}
	return s, nil
}

// Config is the server's configuration, its defaults filled in: what a
// wrapper of the server (such as the gateway of package
// github.com/switchboard-dev/switchboard/mcp/gateway) reads to serve it
// alike, for instance whether it is stateless and how long a call may
// take.
func (s *Server) Config() Config {
	c := s.cfg
	c.Audit = s.userAudit
	return c
}

// MCP returns the underlying go-sdk server, to add prompts, resources or
// tools of go-sdk's own kind before serving.
func (s *Server) MCP() *gomcp.Server { return s.mcp }

// Run serves one session over t (for stdio, &gomcp.StdioTransport{}) until
// the client disconnects or ctx ends. A StdioTransport or IOTransport is
// served through Switchboard's own line connection: the framing, frame
// bound and batch rules of go-sdk's, with a write to a client that stopped
// reading bounded (the session ends) and far less garbage per message. On
// Unix a StdioTransport's stdin and stdout are made non-blocking and are
// left open when the session ends.
func (s *Server) Run(ctx context.Context, t gomcp.Transport) error {
	ss, err := s.mcp.Connect(ctx, s.streamTransport(t), nil)
	if err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case <-ctx.Done():
		_ = ss.Close()
		<-ended
		return nil
	case err = <-ended:
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// Close stops watching the toolsets for changes and closes every session
// (HTTP sessions end; a stdio Run returns).
func (s *Server) Close() error {
	s.cancel()
	s.wg.Wait()
	for ss := range s.mcp.Sessions() {
		_ = ss.Close()
	}
	return nil
}

// watch resynchronises the tools whenever a toolset signals a change.
func (s *Server) watch() {
	for _, ts := range s.tools.toolsets {
		cn, ok := ts.(interface{ Changed() <-chan struct{} })
		if !ok {
			continue
		}
		ch := cn.Changed()
		s.wg.Go(func() {
			for {
				select {
				case <-s.ctx.Done():
					return
				case <-ch:
					ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
					s.tools.sync(ctx)
					if s.fronted != nil && ts == s.tools.servers {
						s.fronted.sync(ctx)
					}
					cancel()
				}
			}
		})
	}
}

// middleware resynchronises the tools before each tools/list, so a
// listing sees the toolsets' current tools (they cache, so this is cheap),
// and declares in each initialize (and server/discover) result the
// extensions of the fronted servers connected then.
func (s *Server) middleware(next gomcp.MethodHandler) gomcp.MethodHandler {
	return func(ctx context.Context, method string, req gomcp.Request) (gomcp.Result, error) {
		if method == "tools/list" {
			s.tools.sync(ctx)
		}
		res, err := next(ctx, method, req)
		if err == nil && s.fronted != nil {
			switch r := res.(type) {
			case *gomcp.InitializeResult: // initialize
				s.fronted.declare(r.Capabilities)
			case *gomcp.DiscoverResult: // server/discover (2026-07-28)
				s.fronted.declare(r.Capabilities)
			}
		}
		if method == "logging/setLevel" && err == nil && s.fronted != nil {
			if p, ok := req.GetParams().(*gomcp.SetLoggingLevelParams); ok && p != nil {
				s.fronted.setLevel(ctx, p.Level)
			}
		}
		return res, err
	}
}

// ownCapabilities gives opts capabilities of their own to declare
// extensions in (a copy of the caller's, with its own Extensions map; or
// go-sdk's default, logging, when none were given) and returns them.
func ownCapabilities(opts *gomcp.ServerOptions) *gomcp.ServerCapabilities {
	c := gomcp.ServerCapabilities{Logging: &gomcp.LoggingCapabilities{}}
	if opts.Capabilities != nil {
		c = *opts.Capabilities
	}
	c.Extensions = maps.Clone(c.Extensions)
	if c.Extensions == nil {
		c.Extensions = map[string]any{}
	}
	opts.Capabilities = &c
	return &c
}
