package gateway

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/mcp/gateway/internal/sessionroute"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// Config configures a [Gateway]. Zero values mean the defaults shown.
type Config struct {
	// Conn is the NATS connection the replicas share. With it, a request
	// for a stateful session another replica owns is forwarded to that
	// replica, and a multi round-trip retry to the replica holding its
	// call. Nil: this gateway is a replica alone (no routing, no relay, no
	// audit stream). The gateway does not close it.
	Conn *nats.Conn
	// JetStream is Conn's JetStream, for the bucket of session routes and
	// the audit stream (nil: jetstream.New(Conn)).
	JetStream jetstream.JetStream
	// Prefix starts the subjects of the replicas' traffic and of the audit
	// records, and names the bucket of session routes (default
	// "switchboard": subjects switchboard.mcp.session.<replica>,
	// switchboard.mcp.retry.<replica>, switchboard.audit.<tool>; bucket
	// SWITCHBOARD_MCP_SESSIONS).
	Prefix string
	// Replica names this replica among those sharing Conn (default:
	// random). It must hold no dots, blanks or wildcards, and differ from
	// every other replica's.
	Replica string
	// Audit publishes the record of every tools/call ([server.AuditRecord]
	// as JSON) on JetStream, subject <Prefix>.audit.<tool> of the stream
	// [AuditStream]. It needs Conn.
	Audit bool
	// Path is where [Gateway.Handler] serves the MCP endpoint (default
	// "/mcp").
	Path string
	// Logger receives structured logs (nil: none).
	Logger *zerolog.Logger
}

// Gateway serves a [server.Server] as one replica among others: its MCP
// endpoint with session routing and the relay of retries, the audit
// stream, and health probes. It is safe for concurrent use.
type Gateway struct {
	srv     *server.Server
	cfg     Config
	log     zerolog.Logger
	handler http.Handler
	health  health
	router  *sessionroute.Router // nil: stateless, or no Conn
	relay   *relay               // nil: no Conn

	closeOnce sync.Once
}

// New wraps srv. It does the I/O the replicas' shared state needs, and no
// other: with Conn, it subscribes to this replica's subjects (retries,
// and for a stateful srv the forwarded session requests) and opens or
// creates the bucket of session routes; with Audit, it creates or updates
// the audit stream. It then adds to srv a receiving middleware
// (srv.MCP()) that names this replica in the requestStates srv answers
// and relays a retry naming another replica to it, and a receiver of
// srv's call records ([server.Server.AddAudit]). Wrap a Server in one
// Gateway at most. Close stops what New started; it does not close srv or
// Conn.
func New(ctx context.Context, srv *server.Server, cfg Config) (*Gateway, error) {
	if srv == nil {
		return nil, failure.New(failure.Config, failure.SourceMCP, "gateway: a server is required")
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "switchboard"
	}
	if cfg.Path == "" {
		cfg.Path = "/mcp"
	}
	if !strings.HasPrefix(cfg.Path, "/") {
		return nil, failure.New(failure.Config, failure.SourceMCP, fmt.Sprintf("gateway: Path %q must start with /", cfg.Path))
	}
	if _, err := newMux(cfg.Path, http.NotFoundHandler(), &health{}); err != nil {
		return nil, err
	}
	if strings.ContainsAny(cfg.Replica, ". *>\t\r\n") {
		return nil, failure.New(failure.Config, failure.SourceMCP, fmt.Sprintf("gateway: Replica %q must not hold dots, blanks or wildcards", cfg.Replica))
	}
	if cfg.Replica == "" {
		cfg.Replica = strings.ToLower(rand.Text()[:12])
	}
	if cfg.Audit && cfg.Conn == nil {
		return nil, failure.New(failure.Config, failure.SourceMCP, "gateway: Audit needs Conn (the audit stream is on JetStream)")
	}
	if cfg.Conn != nil && cfg.JetStream == nil {
		js, err := jetstream.New(cfg.Conn)
		if err != nil {
			return nil, failure.Wrap(failure.Config, failure.SourceBus, fmt.Errorf("gateway: JetStream: %w", err))
		}
		cfg.JetStream = js
	}
	g := &Gateway{srv: srv, cfg: cfg, log: zerolog.Nop()}
	if cfg.Logger != nil {
		g.log = cfg.Logger.With().Str("component", "mcp-gateway").Str("replica", cfg.Replica).Logger()
	}
	g.health.nc = cfg.Conn
	var a *auditor
	if cfg.Audit {
		var err error
		if a, err = newAuditor(ctx, cfg.JetStream, cfg.Prefix, &g.log); err != nil {
			return nil, err
		}
	}
	endpoint := srv.Handler()
	if cfg.Conn != nil {
		var err error
		if g.relay, err = startRelay(srv, cfg.Conn, cfg.Prefix, cfg.Replica, &g.log); err != nil {
			return nil, err
		}
		if !srv.Config().Stateless {
			// A request for a session another replica owns is
			// forwarded to it.
			g.router, err = sessionroute.New(ctx, sessionroute.Config{Conn: cfg.Conn, JS: cfg.JetStream,
				Prefix: cfg.Prefix, Replica: cfg.Replica, Local: endpoint, Logger: cfg.Logger, Sessions: g.sessions})
			if err != nil {
				g.relay.stop()
				return nil, err
			}
			endpoint = g.router
		}
	}
	mux, _ := newMux(cfg.Path, endpoint, &g.health) // the path was checked first
	if cfg.Conn != nil {
		srv.MCP().AddReceivingMiddleware(g.relay.middleware)
	}
	if a != nil {
		srv.AddAudit(a.record)
	}
	g.handler = mux
	return g, nil
}

// newMux serves endpoint at path and the probes beside it; a path the
// mux refuses is an error.
func newMux(path string, endpoint http.Handler, h *health) (mux *http.ServeMux, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = failure.New(failure.Config, failure.SourceMCP, fmt.Sprintf("gateway: Path %q: %v", path, p))
		}
	}()
	mux = http.NewServeMux()
	mux.Handle(path, endpoint)
	h.mount(mux, path)
	return mux, nil
}

// sessions yields the ids of the server's live sessions.
func (g *Gateway) sessions(yield func(string) bool) {
	for ss := range g.srv.MCP().Sessions() {
		if !yield(ss.ID()) {
			return
		}
	}
}

// Handler serves the MCP endpoint at [Config].Path (the server's
// [server.Server.Handler], with its auth and origin checks, behind the
// session routing), and the health probes beside it, outside auth:
// GET /healthz answers 200 "ok" while the process serves (liveness);
// GET /readyz answers 200 "ready" while the replica should get new
// requests, and 503 "not connected to NATS" while Conn is down (sessions
// and retries route over it) or "shutting down" once [Gateway.Drain] or
// Close was called. A downstream server that is down does not make the
// replica unready: its tools answer unavailable, the others work. A probe
// whose path is Config.Path is left to the endpoint.
func (g *Gateway) Handler() http.Handler { return g.handler }

// Replica is this replica's name ([Config].Replica, or the random one).
func (g *Gateway) Replica() string { return g.cfg.Replica }

// Drain makes /readyz answer 503 "shutting down" from now on, while
// everything else is still served: call it when shutdown begins, and give
// a load balancer time to take the replica out of rotation before closing
// the HTTP server.
func (g *Gateway) Drain() { g.health.draining.Store(true) }

// Close drains the gateway, stops serving forwarded requests and relayed
// retries (those in flight are cancelled or answered), removes this
// replica's session routes and waits for its goroutines. It does not
// close the server or Conn.
func (g *Gateway) Close() error {
	g.closeOnce.Do(func() {
		g.Drain()
		if g.router != nil {
			_ = g.router.Close()
		}
		if g.relay != nil {
			g.relay.stop()
		}
	})
	return nil
}
