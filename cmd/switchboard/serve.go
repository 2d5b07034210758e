package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
	"golang.org/x/time/rate"

	"github.com/switchboard-dev/switchboard/a2a"
	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/guard"
	"github.com/switchboard-dev/switchboard/agent/otelenv"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/mcp"
	"github.com/switchboard-dev/switchboard/mcp/gateway"
	"github.com/switchboard-dev/switchboard/mcp/server"
	"github.com/switchboard-dev/switchboard/skills"
)

// list is a repeatable string flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

// serveOptions are the flags of `switchboard mcp serve`.
type serveOptions struct {
	mcpConfig   string
	skillDirs   list
	a2aPeers    list
	listen      string
	path        string
	allow, ask  list
	deny        list
	allowAll    bool
	rate        float64
	burst       int
	nats        string
	replica     string
	audit       bool
	stateless   bool
	origins     list
	callTimeout time.Duration
	drain       time.Duration
	logLevel    string
	prefix      server.Prefix
	findAndCall bool
	auth        authOptions
	// guards: -guard-pii, -guard-injection, -guard-deny, -guard-detect-only
	guardPII, guardInjection, guardDetect bool
	guardDeny                             list
	verifier                              auth.TokenVerifier // of auth, when enabled (built by parseServe)
}

func parseServe(args []string, stderr io.Writer) (*serveOptions, error) {
	o := &serveOptions{}
	fs := flag.NewFlagSet("switchboard mcp serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.mcpConfig, "mcp-config", "", "an .mcp.json (or claude_desktop_config.json) whose servers to serve")
	fs.Var(&o.skillDirs, "skills", "a skills folder to serve (repeatable): skill tools, prompts and resources")
	fs.Var(&o.a2aPeers, "a2a", "an A2A peer to serve as a tool, name=URL (repeatable)")
	fs.StringVar(&o.listen, "listen", "", "serve Streamable HTTP on this host:port (default: stdio)")
	fs.StringVar(&o.path, "path", "/mcp", "the HTTP endpoint's path")
	fs.Var(&o.allow, "allow", "allow tools matching this pattern (path.Match; repeatable)")
	fs.Var(&o.ask, "ask", "ask the client's user before tools matching this pattern run (repeatable)")
	fs.Var(&o.deny, "deny", "hide and refuse tools matching this pattern (repeatable)")
	fs.BoolVar(&o.allowAll, "allow-all", false, "allow every tool no rule names (default: reads allowed, writes ask, execution denied)")
	fs.Float64Var(&o.rate, "rate", 0, "tools/call per second allowed to each client (0: no limit)")
	fs.IntVar(&o.burst, "burst", 0, "burst of calls allowed to each client (default 1 + rate)")
	fs.StringVar(&o.nats, "nats", "", "NATS URL shared by replicas: the audit stream, sessions and retries routed to the replica holding them (default: an embedded server when -audit is set)")
	fs.StringVar(&o.replica, "replica", "", "this replica's name among gateways sharing -nats (default: random)")
	fs.BoolVar(&o.audit, "audit", false, "publish a record of every call on JetStream (<prefix>.audit.<tool>)")
	fs.BoolVar(&o.stateless, "stateless", false, "serve HTTP without sessions (no elicitation or sampling for clients before 2026-07-28; replicas need no affinity either way)")
	fs.Var(&o.origins, "allowed-origin", "a browser origin allowed besides the server's own (repeatable)")
	fs.DurationVar(&o.callTimeout, "call-timeout", 2*time.Minute, "bound of one tools/call when the tool sets none")
	fs.DurationVar(&o.drain, "shutdown-delay", 0, "on SIGINT or SIGTERM, answer /readyz 503 for this long, still serving, before shutting down (HTTP)")
	fs.StringVar(&o.logLevel, "log-level", "info", "log level on stderr: debug, info, warn, error")
	prefix := fs.String("prefix", "auto", "prefix the names of the -mcp-config servers' tools, prompts and resources with mcp__<server>__: auto (when there are several servers), on, off")
	fs.BoolVar(&o.findAndCall, "find-and-call", false, "list two tools, find_tools and call_tool, instead of every tool served (same permissions, guards and limits)")
	fs.BoolVar(&o.guardPII, "guard-pii", false, "redact emails, phone and card numbers, keys and tokens in every tool result")
	fs.BoolVar(&o.guardInjection, "guard-injection", false, "refuse tool results that look like prompt injection")
	fs.Var(&o.guardDeny, "guard-deny", "refuse tool calls whose arguments match this regular expression (repeatable)")
	fs.BoolVar(&o.guardDetect, "guard-detect-only", false, "the -guard-* guards only log what they would do")
	o.auth.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, errUsage
		}
		return nil, errUsage
	}
	p, err := server.ParsePrefix(*prefix)
	if err != nil {
		fmt.Fprintf(stderr, "-prefix: %v\n", err)
		return nil, errUsage
	}
	o.prefix = p
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %v\n", fs.Args())
		return nil, errUsage
	}
	if o.mcpConfig == "" && len(o.skillDirs) == 0 && len(o.a2aPeers) == 0 {
		fmt.Fprintln(stderr, "nothing to serve: give -mcp-config, -skills or -a2a")
		return nil, errUsage
	}
	if o.auth.enabled() && o.listen == "" {
		fmt.Fprintln(stderr, "-auth-* flags need -listen (stdio has no bearer tokens)")
		return nil, errUsage
	}
	if o.auth.enabled() {
		v, err := o.auth.verifier()
		if err != nil {
			fmt.Fprintln(stderr, err)
			return nil, errUsage
		}
		o.verifier = v
	}
	switch {
	case o.drain < 0:
		fmt.Fprintf(stderr, "-shutdown-delay %v: must not be negative\n", o.drain)
		return nil, errUsage
	case o.callTimeout <= 0:
		fmt.Fprintf(stderr, "-call-timeout %v: must be positive\n", o.callTimeout)
		return nil, errUsage
	case o.rate < 0 || o.burst < 0:
		fmt.Fprintf(stderr, "-rate %v -burst %d: must not be negative\n", o.rate, o.burst)
		return nil, errUsage
	}
	return o, nil
}

// permissions builds the permission policy of the flags.
func (o *serveOptions) permissions() *agent.Permissions {
	p := &agent.Permissions{}
	for _, pat := range o.allow {
		p.Rules = append(p.Rules, agent.Rule{Tool: pat, Permission: agent.Allow})
	}
	for _, pat := range o.ask {
		p.Rules = append(p.Rules, agent.Rule{Tool: pat, Permission: agent.Ask})
	}
	for _, pat := range o.deny {
		p.Rules = append(p.Rules, agent.Rule{Tool: pat, Permission: agent.Deny})
	}
	if o.allowAll {
		p.Default = func(agent.ToolSpec) agent.Permission { return agent.Allow }
	}
	return p
}

// serve runs the gateway until ctx ends (or, on stdio, the client leaves):
// flags → sources → server.New → gateway.New.
func serve(ctx context.Context, o *serveOptions, stdin io.Reader, stdout, stderr io.Writer) error {
	lvl, err := zerolog.ParseLevel(o.logLevel)
	if err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	log := zerolog.New(stderr).Level(lvl).With().Timestamp().Logger()
	// OpenTelemetry from the OTEL_* environment, as any service's (off when
	// nothing is set): the gateway continues each caller's trace and
	// passes it on to the servers behind it.
	tel, err := otelenv.Start(ctx, otelenv.Config{Service: "switchboard", Version: version(), Logger: &log})
	if err != nil {
		return err
	}
	defer func() {
		if err := tel.Close(); err != nil {
			log.Error().Err(err).Msg("telemetry was not exported")
		}
	}()
	policy := failure.NewPolicy(failure.PolicyConfig{Logger: &log})
	// The sources are built before the server; client hands them the
	// server's person and model.
	client := new(server.Client)
	cfg, closeSources, err := o.sources(ctx, policy, &log, client)
	defer closeSources()
	if err != nil {
		return err
	}
	var b *bus.Bus
	if o.audit || o.nats != "" {
		if b, err = newBus(ctx, o.nats, &log); err != nil {
			return err
		}
		defer b.Close()
	}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	gcfg := gateway.Config{Replica: o.replica, Audit: o.audit, Path: o.path, Logger: &log}
	if b != nil {
		gcfg.Conn, gcfg.JetStream, gcfg.Prefix = b.Conn(), b.JetStream(), b.Prefix()
	}
	g, err := gateway.New(ctx, srv, gcfg)
	if err != nil {
		return err
	}
	defer g.Close()
	if o.listen == "" {
		log.Info().Msg("serving MCP on stdio")
		return srv.Run(ctx, stdioTransport(stdin, stdout))
	}
	return serveHTTP(ctx, srv, g, o, &log)
}

// sources builds the server's configuration from the flags: the
// toolsets of -mcp-config, -skills and -a2a (their questions and sampling
// go to client), the policy and the limits. closeSources closes what was
// built, even on error.
func (o *serveOptions) sources(ctx context.Context, policy failure.Policy, log *zerolog.Logger, client *server.Client) (cfg server.Config, closeSources func(), err error) {
	cfg = server.Config{Name: "switchboard", Version: version(), Permissions: o.permissions(),
		CallTimeout: o.callTimeout, RateLimit: rate.Limit(o.rate), RateBurst: o.burst,
		AllowedOrigins: o.origins, Stateless: o.stateless, Policy: policy, Logger: log, Client: client,
		FindAndCall: o.findAndCall}
	if cfg.Guards, err = o.guards(); err != nil {
		return cfg, func() {}, err
	}
	if o.verifier != nil {
		cfg.TokenVerifier = o.verifier
		cfg.AuthOptions = &auth.RequireBearerTokenOptions{ResourceMetadataURL: o.auth.metadataURL}
	}
	var closers []func() error
	closeSources = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			_ = closers[i]()
		}
	}
	if o.mcpConfig != "" {
		servers, err := mcp.LoadFile(o.mcpConfig)
		if err != nil {
			return cfg, closeSources, err
		}
		m, err := mcp.New(ctx, mcp.Config{Servers: servers, Policy: policy, Logger: log,
			Elicitor: client.Elicitor(), Sampler: client.Sampler(),
			OnLog: client.Log, OnResourceUpdated: client.ResourceUpdated})
		if err != nil {
			return cfg, closeSources, err
		}
		closers = append(closers, m.Close)
		cfg.Servers, cfg.Prefix = m, o.prefix
	}
	if len(o.skillDirs) > 0 {
		var roots []skills.Root
		for _, d := range o.skillDirs {
			roots = append(roots, skills.Root{Path: d, Label: d})
		}
		sk, err := skills.New(ctx, skills.Config{Roots: roots, Policy: policy, Logger: log, Guards: guard.Named()})
		if err != nil {
			return cfg, closeSources, err
		}
		closers = append(closers, sk.Close)
		cfg.Toolsets = append(cfg.Toolsets, sk)
		cfg.Skills = sk
	}
	if len(o.a2aPeers) > 0 {
		ts, err := a2aToolset(ctx, o.a2aPeers, policy, log)
		if err != nil {
			return cfg, closeSources, err
		}
		cfg.Toolsets = append(cfg.Toolsets, ts)
	}
	return cfg, closeSources, nil
}

// newBus connects the gateway's bus: the NATS server of url, or an
// embedded one.
func newBus(ctx context.Context, url string, log *zerolog.Logger) (*bus.Bus, error) {
	cfg := bus.Config{Name: "switchboard-gateway", Logger: log}
	if url != "" {
		cfg.URLs = []string{url}
	}
	return bus.New(ctx, cfg)
}

// serveHTTP serves the gateway until ctx ends, then drains it for
// -shutdown-delay and shuts down within 5 s.
func serveHTTP(ctx context.Context, srv *server.Server, g *gateway.Gateway, o *serveOptions, log *zerolog.Logger) error {
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/", g.Handler()) // the endpoint at -path, /healthz, /readyz
	if o.auth.enabled() && o.auth.metadataURL != "" {
		mux.Handle("/.well-known/oauth-protected-resource", o.auth.metadataHandler())
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	// The address actually bound goes to stderr first, for scripts and tests.
	log.Info().Str("addr", ln.Addr().String()).Str("path", o.path).Msg("serving MCP over Streamable HTTP")
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	g.Drain()
	if o.drain > 0 {
		// The balancer sees the replica unready and stops sending it new
		// requests; those in flight and those still arriving are served.
		log.Info().Dur("delay", o.drain).Msg("shutting down: /readyz answers 503 until then")
		select {
		case <-time.After(o.drain):
		case err := <-errc:
			return err
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Close()
	_ = hs.Shutdown(sctx)
	return nil
}

// a2aToolset is the toolset of the -a2a peers (name=URL).
func a2aToolset(ctx context.Context, peers []string, policy failure.Policy, log *zerolog.Logger) (agent.Toolset, error) {
	var ps []a2a.Peer
	for _, p := range peers {
		name, url, ok := strings.Cut(p, "=")
		if !ok || name == "" || url == "" {
			return nil, fmt.Errorf("-a2a %q: want name=URL", p)
		}
		ps = append(ps, a2a.Peer{Name: name, URL: url})
	}
	return a2a.NewToolset(ctx, a2a.ToolsetConfig{Peers: ps, Policy: policy, Logger: log})
}

// stdioTransport serves the session on in and out, which it does not
// close: the process's stdin and stdout as go-sdk's StdioTransport, which
// mcp/server serves with bounded writes (see [server.Server.Run]), other
// streams (tests) as they are.
func stdioTransport(in io.Reader, out io.Writer) gomcp.Transport {
	if in == io.Reader(os.Stdin) && out == io.Writer(os.Stdout) {
		return &gomcp.StdioTransport{}
	}
	return &gomcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}
}

// nopWriteCloser is a writer the session does not close.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// version is the module version the binary was built at.
func version() string { return buildVersion }

// guards builds the -guard-* guards: a tool-result PII redactor and
// injection check, and a tool-call deny-list.
func (o *serveOptions) guards() ([]agent.GuardRule, error) {
	var rules []agent.GuardRule
	if o.guardPII {
		rules = append(rules, agent.GuardRule{Guard: guard.NewPII(guard.PIIConfig{}), At: agent.GuardToolResult, DetectOnly: o.guardDetect})
	}
	if o.guardInjection {
		rules = append(rules, agent.GuardRule{Guard: guard.NewInjection(guard.InjectionConfig{}), At: agent.GuardToolResult, DetectOnly: o.guardDetect})
	}
	if len(o.guardDeny) > 0 {
		d, err := guard.NewDenyList(guard.DenyConfig{Patterns: o.guardDeny})
		if err != nil {
			return nil, fmt.Errorf("-guard-deny: %w", err)
		}
		rules = append(rules, agent.GuardRule{Guard: d, At: agent.GuardToolCall, DetectOnly: o.guardDetect})
	}
	return rules, nil
}
