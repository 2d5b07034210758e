package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/schema"
	"github.com/switchboard-dev/switchboard/mcp/internal/oauth"
)

// Config configures a Manager. Zero values mean the defaults shown.
type Config struct {
	// Servers to connect. Names must be unique.
	Servers []ServerConfig
	// Policy runs the manager's work against each server (calls,
	// connection attempts) and handles the failures nobody else sees
	// (a reconnect failing, a lost session). Nil: failure.Default, asked
	// at each use; an agent the manager's toolset is given to does not
	// change it. A policy without a Logger logs the manager's own work
	// to Logger.
	Policy failure.Policy
	// Logger receives structured logs, including servers' log messages and
	// stdio servers' stderr (nil: none).
	Logger *zerolog.Logger

	// Sampler answers servers' sampling requests (the bus's sampler). Nil:
	// the sampling capability is not declared.
	Sampler agent.Sampler
	// MaxSamplingTokens caps the maxTokens a server may ask for (default 4096).
	MaxSamplingTokens int
	// Elicitor answers servers' elicitations, form and URL mode (the bus's
	// elicitor). Nil: the elicitation capability is not declared.
	Elicitor agent.Elicitor
	// OnLog, if set, receives every log message a server sends. It must not
	// block.
	OnLog func(ctx context.Context, msg LogMessage)
	// OnResourceUpdated, if set, receives resources/updated notifications of
	// subscribed resources (the bus can publish them). It must not block.
	OnResourceUpdated func(ctx context.Context, server, uri string)

	// MaxConcurrentConnects bounds the connection attempts in flight
	// (default 8).
	MaxConcurrentConnects int
	// StartupTimeout bounds one server's connection and handshake (default
	// 30s); a server's own StartupTimeout wins.
	StartupTimeout time.Duration
	// DiscoveryTimeout bounds the 2026-07-28 server/discover probe on stdio
	// and WebSocket servers; a server that has not finished the handshake by
	// then is restarted and spoken to with the 2025-11-25 initialize
	// handshake (default 5s).
	DiscoveryTimeout time.Duration
	// IdleTimeout cancels a call that reports no progress for this long
	// (default: none); a server's IdleTimeout wins.
	IdleTimeout time.Duration
	// ShutdownGrace is how long a stdio server has to exit after its stdin
	// is closed, and again after SIGTERM, before it is killed (default 2s).
	ShutdownGrace time.Duration
	// RestartBackoff is the first delay before reconnecting a lost server;
	// later delays double up to MaxRestartBackoff (defaults 200ms and 30s).
	RestartBackoff    time.Duration
	MaxRestartBackoff time.Duration
	// MaxRestarts is the number of consecutive failed connection attempts
	// after which a server is given up (default 20; negative: never).
	MaxRestarts int

	// KeepAlive is the interval of the ping health check on http, sse and
	// ws servers (protocol revisions before 2026-07-28); two missed pings
	// close the session, which is then re-established (default 30s;
	// negative: off). Stdio servers are watched through their process.
	KeepAlive time.Duration

	// SaveResultsOver is the size in bytes above which a tool result is
	// saved to a file and the model gets a preview, a pointer and the
	// mcp_read_result tool (default 64 KiB). It is not agent.Config's
	// MaxResultBytes, which caps the text of a result shown to the model.
	SaveResultsOver int
	// ResultDir is where large results are written (default: a directory
	// under os.TempDir() removed by Close). In a directory given here only
	// the files the Manager wrote are removed.
	ResultDir string
	// ResultTTL is how long a saved result is kept (default 1h; negative:
	// until Close). At most 256 results and 512 MiB are kept: beyond that
	// the oldest are removed first. Close removes them all.
	ResultTTL time.Duration
	// DisableResourceTools hides the mcp_list_resources, mcp_read_resource
	// and mcp_get_prompt tools from the model.
	DisableResourceTools bool

	// ClientName and ClientVersion identify the client to servers (default
	// "switchboard", "0.1.0").
	ClientName, ClientVersion string
	// HTTPClient is used by http, sse and ws servers (nil: http.DefaultClient).
	HTTPClient *http.Client
	// TokenStore keeps the servers' OAuth logins, per server and user (nil:
	// in memory, for the Manager's life). See ServerConfig.Auth.
	TokenStore TokenStore
}

// LogMessage is a log message a server sent (notifications/message).
type LogMessage struct {
	Server string `json:"server"`
	Level  string `json:"level"`
	Logger string `json:"logger,omitempty"`
	Data   any    `json:"data"`
	// Run is the run id of the agent call the message was sent during,
	// when the server had exactly that call in flight (or the message came
	// with the call's context); "" otherwise.
	Run string `json:"run,omitempty"`
}

// Manager owns the connections to a set of MCP servers and offers their
// tools, resources and prompts. It is safe for concurrent use.
type Manager struct {
	cfg     Config
	log     zerolog.Logger
	schemas *schema.Cache
	servers []*server
	byName  map[string]*server

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	sem    chan struct{}

	tokens atomic.Uint64

	changed chan struct{}
	tsMu    sync.Mutex
	tsGen   uint64 // bumped on every list change
	tsBuilt uint64
	tools   []agent.Tool

	results   *resultStore
	closeOnce sync.Once

	logins    *oauth.Logins // logins awaiting their redirect (auth.go)
	memTokens *memStore
}

// New validates cfg, starts connecting every enabled server concurrently
// and returns when each has connected or failed its first attempt, or when
// ctx is done, whichever is first. A server that fails keeps being retried
// in the background with backoff; only an invalid configuration is an
// error. ctx bounds only that first wait (its values reach the connection
// attempts): the connections outlive it, until Close.
func New(ctx context.Context, cfg Config) (*Manager, error) {
	if cfg.MaxConcurrentConnects <= 0 {
		cfg.MaxConcurrentConnects = 8
	}
	if cfg.StartupTimeout <= 0 {
		cfg.StartupTimeout = 30 * time.Second
	}
	if cfg.DiscoveryTimeout <= 0 {
		cfg.DiscoveryTimeout = 5 * time.Second
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = 2 * time.Second
	}
	if cfg.RestartBackoff <= 0 {
		cfg.RestartBackoff = 200 * time.Millisecond
	}
	if cfg.MaxRestartBackoff <= 0 {
		cfg.MaxRestartBackoff = 30 * time.Second
	}
	if cfg.MaxRestarts == 0 {
		cfg.MaxRestarts = 20
	}
	if cfg.KeepAlive == 0 {
		cfg.KeepAlive = 30 * time.Second
	}
	if cfg.SaveResultsOver <= 0 {
		cfg.SaveResultsOver = 64 << 10
	}
	if cfg.MaxSamplingTokens <= 0 {
		cfg.MaxSamplingTokens = 4096
	}
	if cfg.ClientName == "" {
		cfg.ClientName = "switchboard"
	}
	if cfg.ClientVersion == "" {
		cfg.ClientVersion = "0.1.0"
	}
	m := &Manager{cfg: cfg, log: zerolog.Nop(), schemas: schema.NewCache(), byName: map[string]*server{},
		changed: make(chan struct{}, 1), sem: make(chan struct{}, cfg.MaxConcurrentConnects)}
	if cfg.Logger != nil {
		m.log = cfg.Logger.With().Str("component", "mcp").Logger()
	}
	m.logins, m.memTokens = oauth.NewLogins(m.log), &memStore{}
	for i := range cfg.Servers {
		sc := cfg.Servers[i]
		if err := sc.normalize(); err != nil {
			return nil, err
		}
		if _, dup := m.byName[sc.Name]; dup {
			return nil, &configError{Server: sc.Name, Msg: "server name is used twice"}
		}
		s := newServer(m, sc)
		m.servers = append(m.servers, s)
		m.byName[sc.Name] = s
	}
	dir := cfg.ResultDir
	owned := false
	if dir == "" {
		d, err := os.MkdirTemp("", "switchboard-mcp-results-")
		if err != nil {
			return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceMCP, Op: "result dir", Err: err,
				Message: "cannot create a directory for large results"}
		}
		dir, owned = d, true
	}
	m.results = newResultStore(dir, owned, cfg.ResultTTL)
	m.ctx, m.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if cfg.Logger != nil {
		m.ctx = m.log.WithContext(m.ctx) // a policy without a Logger logs here
	}
	var first sync.WaitGroup
	for _, s := range m.servers {
		if s.cfg.Disabled {
			s.setState(stateDisabled, nil)
			continue
		}
		first.Add(1)
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			s.supervise(m.ctx, first.Done)
		}()
	}
	done := make(chan struct{})
	go func() { first.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		// The caller gave up waiting; connections go on in the background.
	}
	return m, nil
}

// Close disconnects every server (stdio servers: stdin closed, then
// SIGTERM, then SIGKILL) and waits for the background goroutines to end.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		m.cancel()
		m.wg.Wait()
		m.results.close()
		m.logins.Close()
	})
	return nil
}

// ServerNames returns the configured servers' names in order.
func (m *Manager) ServerNames() []string {
	names := make([]string, len(m.servers))
	for i, s := range m.servers {
		names[i] = s.cfg.Name
	}
	return names
}

// The connection states of Status.State.
const (
	stateConnecting = "connecting"
	stateReady      = "ready"
	stateRestarting = "restarting"
	stateFailed     = "failed"
	stateDisabled   = "disabled"
	stateClosed     = "closed"
)

// Status describes one server.
type Status struct {
	Name string
	Type string
	// State is the connection state: "connecting", "ready", "restarting"
	// (after a lost connection, until it is back), "failed" (the last
	// attempt failed; Err says why), "disabled" (by its configuration) or
	// "closed".
	State string
	// Err is the last failure, if any.
	Err error
	// Protocol is the negotiated protocol revision.
	Protocol string
	// ServerName and ServerVersion are what the server says it is.
	ServerName, ServerVersion string
	// Connects counts successful connections (restarts are Connects-1).
	Connects int
	// Tools is the number of tools in the last good listing.
	Tools int
}

// Status returns every server's status, in configuration order.
func (m *Manager) Status() []Status {
	out := make([]Status, 0, len(m.servers))
	for _, s := range m.servers {
		out = append(out, s.status())
	}
	return out
}

// WaitReady waits until the named servers (all enabled servers when none
// are named) are ready, or ctx is done.
func (m *Manager) WaitReady(ctx context.Context, names ...string) error {
	if len(names) == 0 {
		for _, s := range m.servers {
			if !s.cfg.Disabled {
				names = append(names, s.cfg.Name)
			}
		}
	}
	for _, n := range names {
		s, err := m.server(n)
		if err != nil {
			return err
		}
		if _, err := s.session(ctx, 0); err != nil {
			return err
		}
	}
	return nil
}

func (m *Manager) server(name string) (*server, error) {
	s, ok := m.byName[name]
	if !ok {
		return nil, &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceMCP, Name: name,
			Message: fmt.Sprintf("there is no MCP server named %q", name)}
	}
	return s, nil
}

// listChanged records that some server's tools changed and signals the
// toolset's watchers.
func (m *Manager) listChanged() {
	m.tsMu.Lock()
	m.tsGen++
	m.tsMu.Unlock()
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

// handle passes a background failure through the policy.
func (m *Manager) handle(ctx context.Context, err error) {
	if err == nil || errors.Is(err, context.Canceled) && m.ctx.Err() != nil {
		return
	}
	m.pol().Handle(ctx, err)
}
