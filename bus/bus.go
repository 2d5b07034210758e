package bus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/bus/internal/jsfail"
	"github.com/switchboard-dev/switchboard/failure"
)

// StreamConfig configures the JetStream stream that keeps events, progress
// and A2A task updates so that late subscribers can replay them. The zero
// value means defaults.
type StreamConfig struct {
	// Name of the stream (default: the prefix upper-cased, with characters
	// other than letters, digits, - and _ replaced by _).
	Name string
	// MaxAge drops messages older than this (default 24h).
	MaxAge time.Duration
	// MaxBytes bounds the stream's size; the oldest messages go first
	// (default 256 MiB).
	MaxBytes int64
	// Replicas is the number of copies in a cluster (default 1).
	Replicas int
	// Memory keeps the stream in memory instead of files.
	Memory bool
}

// Config configures a Bus. The zero value starts an embedded server.
type Config struct {
	// URLs of an external NATS server or cluster. Empty starts an embedded
	// nats-server in-process.
	URLs []string
	// Prefix of every subject (default "switchboard"). It is sanitized
	// token by token.
	Prefix string
	// Name is the client connection's name (default "switchboard").
	Name string

	// Token, User and Password, CredsFile (a .creds JWT file) and NKeyFile
	// (an nkey seed file) authenticate to an external server. With an
	// embedded server that listens, Token (or User and Password) is also
	// required from the clients that join.
	Token     string
	User      string
	Password  string
	CredsFile string
	NKeyFile  string

	// Listen, for the embedded server, is a host:port to accept other
	// processes on (port 0 picks a free one), e.g. "127.0.0.1:0". Empty
	// means in-process only. Use a loopback host unless the port is
	// protected by Token or User/Password.
	Listen string
	// StoreDir is the embedded server's JetStream directory (default: a
	// temporary directory removed by Close).
	StoreDir string

	// InOrder connects to URLs in the order given (the first is preferred,
	// e.g. the local node) instead of in random order.
	InOrder bool
	// MaxReconnects bounds reconnect attempts to an external server
	// (default: forever; a negative value also means forever).
	MaxReconnects int
	// ReconnectWait is the pause between reconnect attempts (default 1s).
	ReconnectWait time.Duration
	// ReconnectBufSize bounds what is buffered while reconnecting (default
	// 8 MiB).
	ReconnectBufSize int
	// ConnectTimeout bounds connecting (default 5s).
	ConnectTimeout time.Duration

	// Stream configures the events/progress/tasks stream.
	Stream StreamConfig

	// EventBuffer is the number of events Emit buffers before it drops
	// (default 4096).
	EventBuffer int
	// SamplingTimeout bounds a sampling request without a ctx deadline
	// (default 2 minutes).
	SamplingTimeout time.Duration
	// ElicitTimeout bounds an elicitation without a ctx deadline (default
	// 10 minutes: a person answers it).
	ElicitTimeout time.Duration

	// Policy runs the bus's operations (requests, connection attempts,
	// store and stream operations) and handles its failures (nil:
	// failure.Default, asked at each use). Agents and workers given this
	// bus do not take it: they follow their own Config's Policy, by the
	// same rule. A policy without a Logger logs the bus's background
	// failures to Logger.
	Policy failure.Policy
	// Logger receives structured logs (nil: none).
	Logger *zerolog.Logger
}

// Bus is a connection to NATS (and, by default, the embedded server it
// runs). It is safe for concurrent use. Close it when done.
type Bus struct {
	cfg    Config
	log    zerolog.Logger
	bg     context.Context // carries log, for failures outside any call
	subj   subjects
	nc     *nats.Conn
	js     jetstream.JetStream
	srv    *server.Server
	tmpDir string
	stream string
	closed chan struct{} // closed when the connection is closed

	events *eventPublisher

	mu       sync.Mutex
	services []*busService
	isClosed atomic.Bool
}

// New connects to the bus described by cfg: an embedded server when
// cfg.URLs is empty, else the external servers. It ensures the stream of
// events, progress and task updates exists.
func New(ctx context.Context, cfg Config) (*Bus, error) {
	if cfg.Prefix == "" {
		cfg.Prefix = "switchboard"
	}
	if cfg.Name == "" {
		cfg.Name = "switchboard"
	}
	if cfg.ReconnectWait <= 0 {
		cfg.ReconnectWait = time.Second
	}
	if cfg.ReconnectBufSize <= 0 {
		cfg.ReconnectBufSize = 8 << 20
	}
	if cfg.MaxReconnects == 0 {
		cfg.MaxReconnects = -1
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 5 * time.Second
	}
	if cfg.EventBuffer <= 0 {
		cfg.EventBuffer = 4096
	}
	if cfg.SamplingTimeout <= 0 {
		cfg.SamplingTimeout = 2 * time.Minute
	}
	if cfg.ElicitTimeout <= 0 {
		cfg.ElicitTimeout = 10 * time.Minute
	}
	s := &cfg.Stream
	if s.Name == "" {
		s.Name = streamName(cfg.Prefix)
	}
	if s.MaxAge <= 0 {
		s.MaxAge = 24 * time.Hour
	}
	if s.MaxBytes <= 0 {
		s.MaxBytes = 256 << 20
	}
	if s.Replicas <= 0 {
		s.Replicas = 1
	}
	b := &Bus{cfg: cfg, log: zerolog.Nop(), subj: newSubjects(cfg.Prefix), stream: s.Name, closed: make(chan struct{})}
	if cfg.Logger != nil {
		b.log = *cfg.Logger
	}
	b.log = b.log.With().Str("component", "bus").Logger()
	b.bg = b.log.WithContext(context.Background())
	if err := b.connect(); err != nil {
		b.shutdownServer()
		return nil, err
	}
	js, err := jetstream.New(b.nc)
	if err != nil {
		b.abort()
		return nil, b.fail(failure.Internal, "jetstream", err, "JetStream could not be set up")
	}
	b.js = js
	if err := b.ensureStream(ctx); err != nil {
		b.abort()
		return nil, err
	}
	b.events = newEventPublisher(b)
	return b, nil
}

// streamName derives a JetStream stream name from a subject prefix.
func streamName(prefix string) string {
	var sb strings.Builder
	for _, r := range strings.ToUpper(prefix) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '-' || r == '_' {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('_')
		}
	}
	return sb.String()
}

func (b *Bus) connect() error {
	cfg := b.cfg
	opts := []nats.Option{
		nats.Name(cfg.Name),
		nats.MaxReconnects(cfg.MaxReconnects),
		nats.ReconnectWait(cfg.ReconnectWait),
		nats.ReconnectBufSize(cfg.ReconnectBufSize),
		nats.Timeout(cfg.ConnectTimeout),
		nats.ClosedHandler(func(*nats.Conn) { close(b.closed) }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil && !b.isClosed.Load() {
				b.pol().Handle(b.bg, &failure.Error{Kind: failure.Transient, Source: failure.SourceBus,
					Op: "connection", Err: err, Message: "the bus connection was lost; reconnecting"})
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			b.log.Info().Str("server", nc.ConnectedUrlRedacted()).Msg("bus reconnected")
		}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subject := ""
			if sub != nil {
				subject = sub.Subject
			}
			b.pol().Handle(b.bg, &failure.Error{Kind: failure.Transient, Source: failure.SourceBus,
				Name: subject, Op: "async", Err: err, Message: "the bus reported an asynchronous error"})
		}),
	}
	switch {
	case cfg.CredsFile != "":
		opts = append(opts, nats.UserCredentials(cfg.CredsFile))
	case cfg.NKeyFile != "":
		o, err := nats.NkeyOptionFromSeed(cfg.NKeyFile)
		if err != nil {
			return b.fail(failure.Config, "connect", err, "the nkey seed file could not be read")
		}
		opts = append(opts, o)
	case cfg.Token != "":
		opts = append(opts, nats.Token(cfg.Token))
	case cfg.User != "":
		opts = append(opts, nats.UserInfo(cfg.User, cfg.Password))
	}
	if cfg.InOrder {
		opts = append(opts, nats.DontRandomize())
	}
	url := strings.Join(cfg.URLs, ",")
	if len(cfg.URLs) == 0 {
		if err := b.startServer(); err != nil {
			return err
		}
		opts = append(opts, nats.InProcessServer(b.srv))
		url = ""
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return b.fail(failure.Unavailable, "connect", err, "the bus could not connect to NATS")
	}
	b.nc = nc
	return nil
}

// startServer starts the embedded nats-server.
func (b *Bus) startServer() error {
	cfg := b.cfg
	dir := cfg.StoreDir
	if dir == "" {
		d, err := os.MkdirTemp("", "switchboard-nats-*")
		if err != nil {
			return b.fail(failure.Config, "embedded server", err, "the JetStream store directory could not be created")
		}
		dir, b.tmpDir = d, d
	}
	opts := &server.Options{
		ServerName: "switchboard-embedded",
		DontListen: true,
		JetStream:  true,
		StoreDir:   dir,
		NoSigs:     true,
		NoLog:      true,
	}
	if cfg.Listen != "" {
		host, port, err := net.SplitHostPort(cfg.Listen)
		if err != nil {
			return b.fail(failure.Config, "embedded server", err, "Config.Listen must be host:port")
		}
		p, err := strconv.Atoi(port)
		if err != nil || p < 0 || p > 65535 {
			return b.fail(failure.Config, "embedded server", fmt.Errorf("port %q", port), "Config.Listen has an invalid port")
		}
		if p == 0 {
			p = server.RANDOM_PORT
		}
		if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && host != "localhost" && cfg.Token == "" && cfg.User == "" {
			b.log.Warn().Str("listen", cfg.Listen).Msg("the embedded NATS server listens beyond loopback without authentication")
		}
		opts.DontListen, opts.Host, opts.Port = false, host, p
		opts.Authorization = cfg.Token
		opts.Username, opts.Password = cfg.User, cfg.Password
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return b.fail(failure.Config, "embedded server", err, "the embedded NATS server could not be configured")
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		srv.WaitForShutdown()
		return b.fail(failure.Unavailable, "embedded server", errors.New("not ready after 10s"), "the embedded NATS server did not start")
	}
	b.srv = srv
	return nil
}

func (b *Bus) ensureStream(ctx context.Context) error {
	s := b.cfg.Stream
	storage := jetstream.FileStorage
	if s.Memory {
		storage = jetstream.MemoryStorage
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	sc := jetstream.StreamConfig{
		Name:        s.Name,
		Description: "Switchboard run events, progress and A2A task updates",
		Subjects:    []string{b.subj.events + ">", b.subj.progress + ">", b.subj.tasks + ">"},
		MaxAge:      s.MaxAge,
		MaxBytes:    s.MaxBytes,
		Replicas:    s.Replicas,
		Storage:     storage,
		Discard:     jetstream.DiscardOld,
	}
	err := b.jetStreamAdmin(ctx, failure.Key{Source: failure.SourceBus, Name: "jetstream"}, "create stream", func(ctx context.Context) error {
		_, err := b.js.CreateOrUpdateStream(ctx, sc)
		return err
	})
	if err != nil {
		return b.wrap(err, "create stream", "the bus stream could not be created")
	}
	return nil
}

// jetStreamAdmin runs an administrative JetStream operation (create a
// stream or bucket) through the bus's policy, waiting out a cluster that is
// still electing its leader.
func (b *Bus) jetStreamAdmin(ctx context.Context, key failure.Key, op string, f func(context.Context) error) error {
	return jsfail.Admin(ctx, b.pol(), key, op, f)
}

// Prefix returns the bus's sanitized subject prefix (Config.Prefix, default
// "switchboard"); every subject of the bus is under it (docs/bus.md lists
// the scheme).
func (b *Bus) Prefix() string { return b.subj.prefix }

// Conn returns the underlying NATS connection (for advanced use; do not
// close it).
func (b *Bus) Conn() *nats.Conn { return b.nc }

// JetStream returns the JetStream context of the connection.
func (b *Bus) JetStream() jetstream.JetStream { return b.js }

// StreamName is the name of the events/progress/tasks stream.
func (b *Bus) StreamName() string { return b.stream }

// pol is the bus's failure policy: Config.Policy, else the process
// default.
func (b *Bus) pol() failure.Policy { return failure.Or(b.cfg.Policy) }

// ClientURL is the URL other processes connect to when the embedded server
// listens (Config.Listen); otherwise "".
func (b *Bus) ClientURL() string {
	if b.srv == nil || b.cfg.Listen == "" {
		return ""
	}
	return b.srv.ClientURL()
}

// Close stops the services this Bus serves (their in-flight handlers get
// 5s together, then are cancelled and awaited 5s more), flushes buffered
// events, drains the connection's subscriptions and the connection, then
// shuts the embedded server down and removes a temporary store directory.
// It takes at most 30s whatever the server and the responders' handlers
// do; later calls return nil at once.
func (b *Bus) Close() error {
	if !b.isClosed.CompareAndSwap(false, true) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	var errs []error
	b.mu.Lock()
	svcs := b.services
	b.services = nil
	b.mu.Unlock()
	// The services stop together: their in-flight handlers share one
	// grace, then each cancelled handler gets stopGrace more.
	gctx, gcancel := context.WithTimeout(ctx, stopGrace)
	stopErrs := make([]error, len(svcs))
	var wg sync.WaitGroup
	for i, s := range svcs {
		wg.Go(func() { stopErrs[i] = s.stop(gctx) })
	}
	wg.Wait()
	gcancel()
	errs = append(errs, stopErrs...)
	b.events.close(ctx)
	if err := b.nc.Drain(); err != nil {
		// Disconnected (or already closed): nothing can be drained.
		b.nc.Close()
	}
	select {
	case <-b.closed:
	case <-ctx.Done():
		b.nc.Close()
		<-b.closed
		errs = append(errs, b.fail(failure.Timeout, "close", ctx.Err(), "draining the bus connection timed out"))
	}
	b.shutdownServer()
	return errors.Join(errs...)
}

// closeTimeout bounds Close.
const closeTimeout = 30 * time.Second

// abort closes a half-built Bus.
func (b *Bus) abort() {
	b.isClosed.Store(true)
	b.nc.Close()
	b.shutdownServer()
}

func (b *Bus) shutdownServer() {
	if b.srv != nil {
		b.srv.Shutdown()
		b.srv.WaitForShutdown()
	}
	if b.tmpDir != "" {
		_ = os.RemoveAll(b.tmpDir)
	}
}

func (b *Bus) register(s *busService) {
	b.mu.Lock()
	b.services = append(b.services, s)
	b.mu.Unlock()
}

func (b *Bus) unregister(s *busService) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, x := range b.services {
		if x == s {
			b.services = append(b.services[:i], b.services[i+1:]...)
			return
		}
	}
}
