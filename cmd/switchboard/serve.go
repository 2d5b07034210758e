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
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
	"golang.org/x/time/rate"

	"github.com/switchboard-dev/switchboard/a2a"
	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/sessionroute"
	"github.com/switchboard-dev/switchboard/internal/telemetry/otelenv"
	"github.com/switchboard-dev/switchboard/mcp"
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
	auth        authOptions
	verifier    auth.TokenVerifier // of auth, when enabled (built by parseServe)
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
	fs.DurationVar(&o.drain, "shutdown-delay", 0, "on SIGINT or SIGTERM, answer "+readyPath+" 503 for this long, still serving, before shutting down (HTTP)")
	fs.StringVar(&o.logLevel, "log-level", "info", "log level on stderr: debug, info, warn, error")
	o.auth.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, errUsage
		}
		return nil, errUsage
	}
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

// serve runs the gateway until ctx ends (or, on stdio, the client leaves).
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
	cfg := server.Config{Name: "switchboard", Version: version(), Permissions: o.permissions(),
		CallTimeout: o.callTimeout, RateLimit: rate.Limit(o.rate), RateBurst: o.burst,
		AllowedOrigins: o.origins, Stateless: o.stateless, Policy: policy, Logger: &log}
	var closers []func()
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}()
	// The server is built after its sources, which need its Elicitor and
	// Sampler: they reach it through this late binding.
	late := lateClient{srv: &atomic.Pointer[server.Server]{}}
	if o.mcpConfig != "" {
		servers, err := mcp.LoadFile(o.mcpConfig)
		if err != nil {
			return err
		}
		m, err := mcp.New(ctx, mcp.Config{Servers: servers, Policy: policy, Logger: &log,
			Elicitor: late.elicitor(), Sampler: late.sampler()})
		if err != nil {
			return err
		}
		closers = append(closers, func() { _ = m.Close() })
		cfg.Toolsets = append(cfg.Toolsets, m.Toolset())
	}
	if len(o.skillDirs) > 0 {
		var roots []skills.Root
		for _, d := range o.skillDirs {
			roots = append(roots, skills.Root{Path: d, Label: d})
		}
		sk, err := skills.New(ctx, skills.Config{Roots: roots, Policy: policy, Logger: &log})
		if err != nil {
			return err
		}
		closers = append(closers, func() { _ = sk.Close() })
		cfg.Toolsets = append(cfg.Toolsets, sk)
		cfg.Skills = sk
	}
	if len(o.a2aPeers) > 0 {
		ts, err := a2aToolset(ctx, o.a2aPeers, policy, &log)
		if err != nil {
			return err
		}
		cfg.Toolsets = append(cfg.Toolsets, ts)
	}
	var b *bus.Bus
	if o.audit || o.nats != "" {
		if b, err = newBus(ctx, o.nats, &log); err != nil {
			return err
		}
		closers = append(closers, func() { _ = b.Close() })
	}
	if o.audit {
		a, err := newAuditor(ctx, b, &log)
		if err != nil {
			return err
		}
		cfg.Audit = a.record
	}
	var rl *relay
	if o.nats != "" {
		// Replicas share the NATS server: a retry of a call held by
		// another replica is relayed to it.
		rl = newRelay(b, o.callTimeout, &log)
		cfg.Replica, cfg.Relay = o.replica, rl.forward
	}
	if o.verifier != nil {
		cfg.TokenVerifier = o.verifier
		cfg.AuthOptions = &auth.RequireBearerTokenOptions{ResourceMetadataURL: o.auth.metadataURL}
	}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		return err
	}
	late.srv.Store(srv)
	defer srv.Close()
	if rl != nil {
		stop, err := rl.serve(srv)
		if err != nil {
			return err
		}
		defer stop()
	}
	if o.listen == "" {
		tuneProcs(os.Getenv)
		log.Info().Msg("serving MCP on stdio")
		in, out := stdio(stdin, stdout)
		return srv.Run(ctx, &gomcp.IOTransport{Reader: in, Writer: out})
	}
	h := srv.Handler()
	if o.nats != "" && !o.stateless {
		// Replicas sharing -nats, stateful: a request for a session another
		// replica owns is forwarded to it (internal/sessionroute).
		rt, err := sessionroute.New(ctx, sessionroute.Config{Conn: b.Conn(), JS: b.JetStream(), Prefix: b.Prefix(),
			Replica: srv.Replica(), Local: h, Logger: &log, Sessions: func(yield func(string) bool) {
				for ss := range srv.MCP().Sessions() {
					if !yield(ss.ID()) {
						return
					}
				}
			}})
		if err != nil {
			return err
		}
		defer rt.Close()
		h = rt
	}
	hl := &health{}
	if b != nil {
		hl.nc = b.Conn()
	}
	return serveHTTP(ctx, srv, h, hl, o, &log)
}

// serveHTTP serves the endpoint until ctx ends, then shuts down within 5 s.
func serveHTTP(ctx context.Context, srv *server.Server, h http.Handler, hl *health, o *serveOptions, log *zerolog.Logger) error {
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(o.path, h)
	hl.mount(mux, o.path)
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
	hl.draining.Store(true)
	if o.drain > 0 {
		// The balancer sees the replica unready and stops sending it new
		// requests; those in flight and those still arriving are served.
		log.Info().Dur("delay", o.drain).Msg("shutting down: " + readyPath + " answers 503 until then")
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

// lateClient hands sources built before the server its Elicitor and
// Sampler.
type lateClient struct {
	srv *atomic.Pointer[server.Server]
}

func (l lateClient) elicitor() agent.Elicitor {
	return agent.ElicitorFunc(func(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
		srv := l.srv.Load()
		if srv == nil {
			return agent.ElicitationResult{Action: agent.ElicitDecline, Reason: "the gateway is starting"}, nil
		}
		return srv.Elicitor().Elicit(ctx, e)
	})
}

func (l lateClient) sampler() agent.Sampler {
	return samplerFunc(func(ctx context.Context, req agent.SamplingRequest) (agent.SamplingResult, error) {
		srv := l.srv.Load()
		if srv == nil {
			return agent.SamplingResult{}, failure.New(failure.Unavailable, failure.SourceMCP, "the gateway is starting")
		}
		return srv.Sampler().Sample(ctx, req)
	})
}

// samplerFunc adapts a function to agent.Sampler.
type samplerFunc func(ctx context.Context, req agent.SamplingRequest) (agent.SamplingResult, error)

func (f samplerFunc) Sample(ctx context.Context, req agent.SamplingRequest) (agent.SamplingResult, error) {
	return f(ctx, req)
}

// openFile is a file the session does not close (stdin, stdout); its
// other methods are the file's, deadlines and SyscallConn included.
type openFile struct{ *os.File }

func (openFile) Close() error { return nil }

// nopWriteCloser is a writer the session does not close.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// keepOpen returns in and out as the session's reader and writer, which
// it does not close: files as openFile, so that the served connection
// bounds a write to a client that stopped reading, other streams as they
// are.
func keepOpen(in io.Reader, out io.Writer) (io.ReadCloser, io.WriteCloser) {
	var r io.ReadCloser = io.NopCloser(in)
	if f, ok := in.(*os.File); ok {
		r = openFile{f}
	}
	var w io.WriteCloser = nopWriteCloser{out}
	if f, ok := out.(*os.File); ok {
		w = openFile{f}
	}
	return r, w
}

// version is the module version the binary was built at.
func version() string { return buildVersion }
