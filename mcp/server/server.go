// Package server offers Switchboard toolsets and runners to MCP clients, on
// the official Go SDK's server (github.com/modelcontextprotocol/go-sdk),
// over stdio and Streamable HTTP.
//
// Every agent.Toolset (an mcp.Manager's servers under their
// mcp__<server>__<tool> names, skills, A2A peers, Go tools) and every
// agent.Runner (an agent or a workflow, offered as a tool the way
// agent.AsTool offers it) becomes an MCP tool. A tool gets the same call
// context a run gives it: its progress reports become
// notifications/progress, its questions (agent.Call.Elicit: an A2A peer's
// input-required turn, a sub-agent's permission ask) become elicitation
// requests to the MCP client, a runner's events become progress
// notifications, and the client's notifications/cancelled cancels the call.
// Server.Elicitor, Server.Sampler and Server.Model hand the MCP client's
// person and model to agents, routed by the request's context.
//
// The permission policy applies when listing (a denied tool is not listed)
// and when calling (a denied tool is refused; an "ask" is put to the client
// as an elicitation). Calls are rate-limited per client, bounded in time,
// recovered from panics, and each one is recorded for the audit hook.
// Skills are offered as prompts (their bodies) and their bundled files as
// resources. Server.Handler serves Streamable HTTP with OAuth 2.1 bearer
// token checks (go-sdk's auth.RequireBearerToken), DNS-rebinding and
// cross-origin protection.
package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
	"golang.org/x/time/rate"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
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
	// Runners are offered as tools taking one string, "input" (see
	// agent.AsTool), named by the runner.
	Runners []agent.Runner
	// Skills, when set, are also offered as prompts (one per skill, its
	// instructions) and their bundled files as resources
	// (skill://<skill>/<path>). Offer the toolset in Toolsets too for the
	// skill tools.
	Skills *skills.Toolset
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
	// Replica names this server among replicas (default: random); it
	// prefixes its multi round-trip requestStates. Relay, when set, carries
	// a retry whose state names another replica to that replica (whose
	// Server.ServeRetry answers it) and returns the answer: with it, a load
	// balancer without affinity can send a 2026-07-28 client's retries to
	// any replica. The gateway relays over NATS request-reply.
	Replica string
	Relay   func(ctx context.Context, replica string, retry []byte) ([]byte, error)
	// Policy handles failures (nil: failure.NewPolicy with Logger).
	Policy failure.Policy
	// Logger receives structured logs (nil: none).
	Logger *zerolog.Logger
}

// Server is an MCP server offering toolsets and runners. It is safe for
// concurrent use by any number of sessions.
type Server struct {
	cfg    Config
	log    zerolog.Logger
	policy failure.Policy
	mcp    *gomcp.Server
	tools  *toolRegistry
	limits *limiters
	// replica prefixes this server's requestStates.
	replica string
	// inflight maps the run id of each call being served to its session.
	inflight sync.Map
	// pending are the calls of multi round-trip sessions waiting for the
	// client's retry, by requestState (npending counts them).
	pending  sync.Map
	npending atomic.Int64
	// events keeps the recent events of every stateful HTTP session's
	// streams, so that a client whose stream was cut resumes it.
	events *gomcp.MemoryEventStore

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
	if strings.ContainsAny(cfg.Replica, ". *>\t\r\n") {
		return nil, failure.New(failure.Config, failure.SourceMCP, fmt.Sprintf("server: Replica %q must not hold dots, blanks or wildcards", cfg.Replica))
	}
	s := &Server{cfg: cfg, log: zerolog.Nop(), replica: cfg.Replica, events: gomcp.NewMemoryEventStore(nil)}
	if s.replica == "" {
		s.replica = strings.ToLower(rand.Text()[:12])
	}
	if cfg.Logger != nil {
		s.log = cfg.Logger.With().Str("component", "mcp-server").Logger()
	}
	s.policy = cfg.Policy
	if s.policy == nil {
		s.policy = failure.NewPolicy(failure.PolicyConfig{Logger: cfg.Logger})
	}
	s.limits = newLimiters(cfg.RateLimit, cfg.RateBurst, cfg.MaxClients)
	var opts gomcp.ServerOptions
	if cfg.MCPOptions != nil {
		opts = *cfg.MCPOptions
	}
	if cfg.Instructions != "" {
		opts.Instructions = cfg.Instructions
	}
	opts.HasTools = true
	s.mcp = gomcp.NewServer(&gomcp.Implementation{Name: cfg.Name, Version: cfg.Version}, &opts)
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	var err error
	if s.tools, err = newToolRegistry(s); err != nil {
		s.cancel()
		return nil, err
	}
	s.mcp.AddReceivingMiddleware(s.traced, s.middleware)
	s.tools.sync(ctx)
	s.watch()
	if cfg.Skills != nil {
		s.offerSkills(ctx)
	}
	return s, nil
}

// MCP returns the underlying go-sdk server, to add prompts, resources or
// tools of go-sdk's own kind before serving.
func (s *Server) MCP() *gomcp.Server { return s.mcp }

// Run serves one session over t (for stdio, &gomcp.StdioTransport{}) until
// the client disconnects or ctx ends. A StdioTransport or IOTransport is
// served through Switchboard's own line connection (same framing, frame
// bound and batch rules, far less garbage per message).
func (s *Server) Run(ctx context.Context, t gomcp.Transport) error {
	st, fast := s.streamTransport(t)
	if fast != nil {
		defer fast.stop() // the calls it forwards end with the session
	}
	ss, err := s.mcp.Connect(ctx, st, nil)
	if err != nil {
		return err
	}
	if fast != nil {
		fast.ss.Store(ss)
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
					cancel()
				}
			}
		})
	}
}

// middleware resynchronises the tools before each tools/list, so a
// listing sees the toolsets' current tools (they cache, so this is cheap).
func (s *Server) middleware(next gomcp.MethodHandler) gomcp.MethodHandler {
	return func(ctx context.Context, method string, req gomcp.Request) (gomcp.Result, error) {
		if method == "tools/list" {
			s.tools.sync(ctx)
		}
		return next(ctx, method, req)
	}
}
