// Package sessionroute routes the stateful Streamable HTTP sessions of MCP
// gateway replicas that share a NATS server, so that a load balancer
// without session affinity works.
//
// go-sdk keeps a session (and its goroutines, its waiting server→client
// requests, its GET stream) in the process that created it, and has no
// session store. So the session stays where it is, and requests go to it:
// the replica that answers an initialize with a new Mcp-Session-Id records
// session → replica in a JetStream KV bucket (renewed while the session
// lives, removed when it ends); a request carrying a session id another
// replica owns is forwarded to that replica over core NATS
// (<prefix>.mcp.session.<replica>), and the owner's response is streamed
// back, flushed frame by frame, so SSE works. An owner that is gone (no
// entry, or no responder) is answered 404, the MCP rule for an unknown
// session: the client initializes again.
package sessionroute

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/failure"
)

// Defaults of Config.
const (
	DefaultTTL       = 2 * time.Minute
	DefaultMaxServed = 1000
	DefaultHeartbeat = 10 * time.Second
	// startTimeout bounds the owner's answer to a start, a body chunk's
	// ack and a ping's answer.
	startTimeout = 5 * time.Second
	// kvTimeout bounds one KV operation.
	kvTimeout = 2 * time.Second
	// chunkSize is the most data one frame or body chunk carries.
	chunkSize = 64 << 10
	// maxCached bounds the cache of other replicas' sessions' owners.
	maxCached = 10000
)

const sessionHeader = "Mcp-Session-Id"

// Config configures a Router. Zero values are defaults, except Conn, JS,
// Replica and Local.
type Config struct {
	Conn *nats.Conn
	JS   jetstream.JetStream
	// Prefix of the subjects (default "switchboard"): requests for a
	// replica's sessions go to <Prefix>.mcp.session.<Replica>.
	Prefix string
	// Bucket is the KV bucket of session → replica (default: the prefix,
	// upper-cased and sanitized, + "_MCP_SESSIONS").
	Bucket string
	// Replica names this replica; no dots, blanks or wildcards.
	Replica string
	// Local is this replica's handler: go-sdk's stateful
	// StreamableHTTPHandler (behind its auth and origin checks).
	Local http.Handler
	// Sessions yields the ids of the sessions alive in Local; the entries
	// of the others are removed. Nil: entries live until DELETE or TTL.
	Sessions iter.Seq[string]
	// MaxBody bounds a forwarded request's body; it should be Local's
	// limit (default go-sdk's DefaultMaxRequestBodyBytes).
	MaxBody int64
	// TTL of a KV entry (default 2 min); entries are renewed every TTL/3.
	TTL time.Duration
	// MaxServed bounds the forwarded requests this replica serves at once
	// (default 1000); past it a forwarded request is answered 503.
	MaxServed int
	// Heartbeat is the interval of the receiver's pings to the owner of
	// a forwarded request (default 10 s); either side gives up on the
	// other after 3 heartbeats without news.
	Heartbeat time.Duration
	// WriteTimeout bounds writing one frame to the client (default 30 s);
	// the owner waits for a frame's ack for as long plus startTimeout.
	WriteTimeout time.Duration
	Logger       *zerolog.Logger
}

// Router is the http.Handler in front of Local.
type Router struct {
	cfg    Config
	kv     jetstream.KeyValue
	log    zerolog.Logger
	sub    *nats.Subscription
	ctx    context.Context
	cancel context.CancelFunc
	sem    chan struct{}
	wg     sync.WaitGroup

	mu    sync.Mutex
	owned map[string]struct{}
	// owners caches the owners looked up: a session never changes owner,
	// and a gone owner is answered 404 whatever the cache says.
	owners map[string]string

	// counters, for logs and tests
	forwarded atomic.Int64 // requests this replica forwarded to an owner
	served    atomic.Int64 // forwarded requests this replica served as owner
	missing   atomic.Int64 // requests answered 404 because the owner is gone

	closeOnce sync.Once
	gmu       sync.Mutex // guards closing and wg.Add
	closing   bool
}

var keyRE = regexp.MustCompile(`^[-_=A-Za-z0-9]{1,256}$`)

// New opens (or creates) the bucket and starts serving the requests
// forwarded to this replica (ctx bounds opening the bucket). The router
// serves until Close.
func New(ctx context.Context, cfg Config) (*Router, error) {
	if cfg.Conn == nil || cfg.JS == nil || cfg.Local == nil {
		return nil, failure.New(failure.Config, failure.SourceMCP, "sessionroute: Conn, JS and Local are required")
	}
	if cfg.Replica == "" || strings.ContainsAny(cfg.Replica, ". *>\t\r\n") {
		return nil, failure.New(failure.Config, failure.SourceMCP, fmt.Sprintf("sessionroute: Replica %q must be non-empty without dots, blanks or wildcards", cfg.Replica))
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "switchboard"
	}
	if cfg.Bucket == "" {
		cfg.Bucket = bucketName(cfg.Prefix)
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = gomcp.DefaultMaxRequestBodyBytes
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.MaxServed <= 0 {
		cfg.MaxServed = DefaultMaxServed
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 30 * time.Second
	}
	if mp := cfg.Conn.MaxPayload(); mp < 4*chunkSize {
		return nil, failure.New(failure.Config, failure.SourceMCP, fmt.Sprintf("sessionroute: the NATS server's max_payload of %d bytes is below %d", mp, 4*chunkSize))
	}
	r := &Router{cfg: cfg, log: zerolog.Nop(), sem: make(chan struct{}, cfg.MaxServed), owned: map[string]struct{}{}, owners: map[string]string{}}
	if cfg.Logger != nil {
		r.log = cfg.Logger.With().Str("component", "sessionroute").Str("replica", cfg.Replica).Logger()
	}
	kv, err := openBucket(ctx, cfg.JS, cfg.Bucket, cfg.TTL)
	if err != nil {
		return nil, err
	}
	r.kv = kv
	r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	r.sub, err = cfg.Conn.Subscribe(r.subject(cfg.Replica), r.onStart)
	if err != nil {
		r.cancel()
		return nil, failure.Wrap(failure.Unavailable, failure.SourceBus, fmt.Errorf("sessionroute: subscribe: %w", err))
	}
	// Start messages are small and answered at once; bound what waits.
	_ = r.sub.SetPendingLimits(4*cfg.MaxServed, 64<<20)
	if err := cfg.Conn.FlushTimeout(5 * time.Second); err != nil {
		r.cancel()
		_ = r.sub.Unsubscribe()
		return nil, failure.Wrap(failure.Unavailable, failure.SourceBus, fmt.Errorf("sessionroute: flush: %w", err))
	}
	r.wg.Add(1)
	go r.renewLoop()
	return r, nil
}

func (r *Router) subject(replica string) string {
	return r.cfg.Prefix + ".mcp.session." + replica
}

// Close stops serving forwarded requests (those in flight are cancelled),
// removes this replica's entries and waits for its goroutines.
func (r *Router) Close() error {
	r.closeOnce.Do(func() {
		_ = r.sub.Unsubscribe()
		r.cancel()
		r.gmu.Lock()
		r.closing = true
		r.gmu.Unlock()
		r.wg.Wait()
		r.mu.Lock()
		ids := make([]string, 0, len(r.owned))
		for id := range r.owned {
			ids = append(ids, id)
		}
		clear(r.owned)
		r.mu.Unlock()
		r.removeAll(ids)
	})
	return nil
}

// ServeHTTP serves requests of this replica's sessions (and new sessions)
// with Local and forwards the others to their owner.
func (r *Router) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	sid := req.Header.Get(sessionHeader)
	switch {
	case sid == "":
		if req.Method == http.MethodPost {
			r.serveNew(w, req)
			return
		}
	case r.owns(sid):
		if req.Method == http.MethodDelete {
			r.serveDelete(w, req, sid)
			return
		}
	case keyRE.MatchString(sid):
		owner, ok := r.owner(w, req, sid)
		if !ok {
			return
		}
		if owner != r.cfg.Replica {
			r.forward(w, req, sid, owner)
			return
		}
	}
	r.cfg.Local.ServeHTTP(w, req)
}

// owner looks sid up; when it is not known, it answers 404 (or 503 when
// the bucket cannot be read) and ok is false.
func (r *Router) owner(w http.ResponseWriter, req *http.Request, sid string) (string, bool) {
	r.mu.Lock()
	owner, ok := r.owners[sid]
	r.mu.Unlock()
	if ok {
		return owner, true
	}
	owner, err := r.lookup(req.Context(), sid)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		r.missing.Add(1)
		r.log.Debug().Msg("a request for an unknown session: 404")
		http.Error(w, "session not found", http.StatusNotFound)
		return "", false
	case err != nil:
		r.log.Warn().Err(err).Msg("the session bucket could not be read")
		w.Header().Set("Retry-After", "1")
		http.Error(w, "session routing unavailable", http.StatusServiceUnavailable)
		return "", false
	}
	if owner == "" || strings.ContainsAny(owner, ". *>\t\r\n") {
		http.Error(w, "session not found", http.StatusNotFound)
		return "", false
	}
	r.mu.Lock()
	if len(r.owners) >= maxCached {
		for k := range r.owners { // drop one at random
			delete(r.owners, k)
			break
		}
	}
	r.owners[sid] = owner
	r.mu.Unlock()
	return owner, true
}

// uncache forgets the cached owner of sid.
func (r *Router) uncache(sid string) {
	r.mu.Lock()
	delete(r.owners, sid)
	r.mu.Unlock()
}

func (r *Router) owns(sid string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.owned[sid]
	return ok
}
