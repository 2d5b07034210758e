package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/mcp/internal/lineconn"
	"github.com/switchboard-dev/switchboard/mcp/internal/oauth"
	"github.com/switchboard-dev/switchboard/mcp/internal/skillwire"
	"github.com/switchboard-dev/switchboard/mcp/internal/taskwire"
)

// legacyProtocol is the newest revision with the initialize handshake.
const legacyProtocol = "2025-11-25"

// server is one configured MCP server and its connection.
type server struct {
	m      *Manager
	cfg    ServerConfig
	key    failure.Key
	log    zerolog.Logger
	client *gomcp.Client

	refresh chan struct{}
	notes   coalescer   // change notifications pending in go-sdk's queue
	notices taskNotices // the followers of tasks, woken by notifications/tasks

	wordsOnce sync.Once
	words     [2]string // timeoutWords

	mu         sync.Mutex
	sess       *gomcp.ClientSession
	conn       *lineconn.Conn // sess's connection, when it is ours
	noteQ      *noteQueue     // conn's queue of log and progress notifications
	ready      chan struct{}  // closed while sess is set
	state      string
	lastErr    error
	connects   int
	protocol   string // pinned after a discovery fallback
	tools      []*gomcp.Tool
	hasRes     bool
	hasPrompts bool
	// caps are the capabilities the server declared at its last handshake,
	// instructions the instructions it gave.
	caps         *gomcp.ServerCapabilities
	instructions string
	inprocUsed   bool
	inflight     map[string]*inflight
	// urlElicits remembers the URL-mode elicitations forwarded, by id, to
	// place their completion (bounded: see rememberURL).
	urlElicits map[string]agent.Elicitation

	authOnce sync.Once // auth.go: the OAuth handler, made on first use
	auth     *oauth.Handler
	authErr  error
	// startWait ends New's wait for this server's first attempt (set by
	// supervise; auth.go calls it when a login's redirect goes to the
	// host's own handler, which the host mounts only once New returned).
	startWait atomic.Pointer[func()]

	users userSessions // usersession.go: the sessions of other users
}

func newServer(m *Manager, cfg ServerConfig) *server {
	s := &server{m: m, cfg: cfg, key: failure.Key{Source: failure.SourceMCP, Name: cfg.Name},
		log: m.log.With().Str("server", cfg.Name).Logger(), refresh: make(chan struct{}, 1),
		ready: make(chan struct{}), state: stateConnecting, protocol: cfg.ProtocolVersion,
		inflight: map[string]*inflight{}}
	s.notes.log = s.log
	if s.protocol == "" && cfg.Type == typeSSE {
		s.protocol = legacyProtocol // the legacy SSE transport predates server/discover
	}
	s.client = gomcp.NewClient(&gomcp.Implementation{Name: m.cfg.ClientName, Version: m.cfg.ClientVersion}, s.clientOptions())
	s.client.AddSendingMiddleware(s.traceSending) // W3C trace context in _meta, MCP client spans
	// The skills extension's methods (errors only for a standard method's name).
	_ = gomcp.AddSendingCustomMethod[*skillwire.ListParams, *skillwire.ListResult](s.client, skillwire.MethodList)
	_ = gomcp.AddSendingCustomMethod[*skillwire.GetParams, *skillwire.GetResult](s.client, skillwire.MethodGet)
	// The tasks extension's methods (task.go).
	_ = gomcp.AddSendingCustomMethod[*taskwire.TaskParams, *taskwire.TaskResult](s.client, taskwire.MethodGet)
	_ = gomcp.AddSendingCustomMethod[*taskwire.UpdateParams, *taskwire.AckResult](s.client, taskwire.MethodUpdate)
	_ = gomcp.AddSendingCustomMethod[*taskwire.TaskParams, *taskwire.AckResult](s.client, taskwire.MethodCancel)
	// subscriptions/listen is a standard method (go-sdk sends it without
	// awaiting its answer, its stream's lifetime): no registration, its
	// task ids are sent through CallCustomMethod (listenTask).
	s.client.AddReceivingMiddleware(s.elicitUnchecked)
	var roots []*gomcp.Root
	for _, r := range cfg.Roots {
		roots = append(roots, rootOf(r))
	}
	if len(roots) > 0 {
		s.client.AddRoots(roots...)
	}
	return s
}

// rootOf turns a configured path or file:// URI into a root.
func rootOf(r string) *gomcp.Root {
	if strings.Contains(r, "://") {
		return &gomcp.Root{URI: r, Name: filepath.Base(strings.TrimRight(r, "/"))}
	}
	abs, err := filepath.Abs(r)
	if err != nil {
		abs = r
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	return &gomcp.Root{URI: u.String(), Name: filepath.Base(abs)}
}

func (s *server) clientOptions() *gomcp.ClientOptions {
	o := &gomcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *gomcp.ToolListChangedRequest) {
			s.notes.handled("notifications/tools/list_changed", "")
			s.scheduleRefresh()
		},
		PromptListChangedHandler: func(context.Context, *gomcp.PromptListChangedRequest) {
			s.notes.handled("notifications/prompts/list_changed", "")
			s.scheduleRefresh()
		},
		ResourceListChangedHandler: func(context.Context, *gomcp.ResourceListChangedRequest) {
			s.notes.handled("notifications/resources/list_changed", "")
			s.scheduleRefresh()
		},
		ResourceUpdatedHandler: func(ctx context.Context, req *gomcp.ResourceUpdatedNotificationRequest) {
			uri := ""
			if req.Params != nil {
				uri = req.Params.URI
			}
			s.notes.handled("notifications/resources/updated", uri)
			if f := s.m.cfg.OnResourceUpdated; f != nil && req.Params != nil {
				f(ctx, s.cfg.Name, req.Params.URI)
			}
		},
		LoggingMessageHandler:       s.onLog,
		ProgressNotificationHandler: s.onProgress,
	}
	switch s.cfg.Type {
	case typeHTTP, typeSSE, typeWS:
		if s.m.cfg.KeepAlive > 0 {
			o.KeepAlive = s.m.cfg.KeepAlive
			o.KeepAliveFailureThreshold = 2
		}
	}
	if s.m.cfg.Sampler != nil {
		o.CreateMessageHandler = s.onSample
	}
	if s.m.cfg.Elicitor != nil {
		o.ElicitationHandler = s.onElicit
		o.ElicitationCompleteHandler = s.onElicitComplete
		o.Capabilities = &gomcp.ClientCapabilities{
			RootsV2:     &gomcp.RootCapabilities{ListChanged: true},
			Elicitation: &gomcp.ElicitationCapabilities{Form: &gomcp.FormElicitationCapabilities{}, URL: &gomcp.URLElicitationCapabilities{}},
		}
	}
	if s.declaresTasks() {
		if o.Capabilities == nil {
			o.Capabilities = &gomcp.ClientCapabilities{RootsV2: &gomcp.RootCapabilities{ListChanged: true}}
		}
		o.Capabilities.AddExtension(taskwire.Extension, nil)
	}
	return o
}

func (s *server) scheduleRefresh() {
	select {
	case s.refresh <- struct{}{}:
	default: // a refresh is already pending: floods coalesce
	}
}

func (s *server) setState(st string, err error) {
	s.mu.Lock()
	s.state = st
	if err != nil {
		s.lastErr = err
	}
	s.mu.Unlock()
}

func (s *server) status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Name: s.cfg.Name, Type: s.cfg.Type, State: s.state, Err: s.lastErr, Connects: s.connects, Tools: len(s.tools)}
	if s.sess != nil {
		if r := s.sess.InitializeResult(); r != nil {
			st.Protocol = r.ProtocolVersion
			if r.ServerInfo != nil {
				st.ServerName, st.ServerVersion = r.ServerInfo.Name, r.ServerInfo.Version
			}
		}
	}
	return st
}

// session returns the live session, waiting up to wait (0: the startup
// timeout) for a restarting server to come back.
func (s *server) session(ctx context.Context, wait time.Duration) (*gomcp.ClientSession, error) {
	if user, ok := s.otherUser(ctx); ok && !s.cfg.Disabled {
		return s.userSession(ctx, user)
	}
	s.mu.Lock()
	if s.sess != nil && s.conn != nil && s.conn.Broken() {
		// The server stopped reading or its input holds half a message:
		// it is being killed; wait for its successor.
		s.dropLocked()
	}
	sess, ready, st, lastErr := s.sess, s.ready, s.state, s.lastErr
	s.mu.Unlock()
	if sess != nil {
		return sess, nil
	}
	if st == stateFailed || st == stateDisabled || st == stateClosed {
		msg := fmt.Sprintf("MCP server %q is %s", s.cfg.Name, st)
		return nil, &failure.Error{Kind: failure.Unavailable, Source: failure.SourceMCP, Name: s.cfg.Name, Message: msg, Err: lastErr}
	}
	if wait <= 0 {
		wait = s.startupTimeout()
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ready:
		s.mu.Lock()
		sess = s.sess
		s.mu.Unlock()
		if sess != nil {
			return sess, nil
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
	case <-s.m.ctx.Done():
	}
	return nil, &failure.Error{Kind: failure.Unavailable, Source: failure.SourceMCP, Name: s.cfg.Name, Err: lastErr,
		Message: fmt.Sprintf("MCP server %q is not connected (%s)", s.cfg.Name, st)}
}

// dropSession forgets sess if it is the live session, so that callers
// wait for the next one.
func (s *server) dropSession(sess *gomcp.ClientSession) {
	if s.dropUserSession(sess) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == sess && sess != nil {
		s.dropLocked()
	}
}

func (s *server) dropLocked() {
	s.sess, s.conn, s.noteQ = nil, nil, nil
	s.ready = make(chan struct{})
	s.state = stateRestarting
}

// sessionAfter waits for a session other than old.
func (s *server) sessionAfter(ctx context.Context, old *gomcp.ClientSession) (*gomcp.ClientSession, error) {
	if user, ok := s.otherUser(ctx); ok && !s.cfg.Disabled {
		s.dropUserSession(old)
		return s.userSession(ctx, user)
	}
	deadline := time.Now().Add(s.startupTimeout())
	for time.Now().Before(deadline) {
		sess, err := s.session(ctx, time.Until(deadline))
		if err != nil {
			return nil, err
		}
		if sess != old {
			return sess, nil
		}
		if !sleepCtx(ctx, 20*time.Millisecond) {
			return nil, ctx.Err()
		}
	}
	return nil, &failure.Error{Kind: failure.Unavailable, Source: failure.SourceMCP, Name: s.cfg.Name, Message: "the server did not come back"}
}

func (s *server) startupTimeout() time.Duration {
	if s.cfg.StartupTimeout > 0 {
		return s.cfg.StartupTimeout
	}
	return s.m.cfg.StartupTimeout
}

// supervise connects, watches the session, and reconnects with backoff
// until ctx is done. firstDone is called after the first attempt.
func (s *server) supervise(ctx context.Context, firstDone func()) {
	var once sync.Once
	first := func() { once.Do(firstDone) }
	s.startWait.Store(&first)
	defer s.closeUsers()
	defer first()
	defer func() {
		if ctx.Err() != nil {
			s.setState(stateClosed, nil)
		}
	}()
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = s.m.cfg.RestartBackoff
	bo.MaxInterval = s.m.cfg.MaxRestartBackoff
	bo.RandomizationFactor = 0.3
	bo.Reset()
	failures := 0
	for ctx.Err() == nil {
		sess, att, err := s.connect(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			s.m.handle(ctx, err)
			if s.singleUse() || s.m.cfg.MaxRestarts > 0 && failures >= s.m.cfg.MaxRestarts || loginEnded(err) {
				s.setState(stateFailed, err)
				s.log.Error().Err(err).Int("attempts", failures).Msg("giving up on MCP server")
				s.notifyWaiters()
				return
			}
			s.setState(stateRestarting, err)
			first()
			if !sleepCtx(ctx, bo.NextBackOff()) {
				return
			}
			continue
		}
		failures = 0
		bo.Reset()
		s.up(ctx, sess, att)
		first()
		s.watch(ctx, sess, att)
		if ctx.Err() != nil {
			return
		}
		if s.singleUse() {
			s.setState(stateFailed, errors.New("in-process session ended"))
			s.notifyWaiters()
			return
		}
		s.setState(stateRestarting, nil)
		if !sleepCtx(ctx, bo.NextBackOff()) {
			return
		}
	}
}

// singleUse reports whether the server's transport serves one session only
// (an in-process server given a Transport rather than Server or
// NewTransport).
func (s *server) singleUse() bool {
	return s.cfg.Type == typeInProcess && s.cfg.Transport != nil
}

// notifyWaiters wakes callers waiting for a session that will not come.
func (s *server) notifyWaiters() {
	s.mu.Lock()
	select {
	case <-s.ready:
	default:
		close(s.ready)
	}
	s.mu.Unlock()
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// up installs a new session and loads its lists.
func (s *server) up(ctx context.Context, sess *gomcp.ClientSession, att *attempt) {
	s.loadLists(ctx, sess)
	s.notes.reset() // what the last session left pending will not be handled
	s.mu.Lock()
	s.sess = sess
	if att != nil {
		s.conn, s.noteQ = att.conn, att.notes
	}
	s.connects++
	s.state = stateReady
	s.lastErr = nil
	select {
	case <-s.ready:
	default:
		close(s.ready)
	}
	s.mu.Unlock()
	st := s.status()
	s.log.Info().Str("protocol", st.Protocol).Str("server_name", st.ServerName).Int("tools", st.Tools).Int("connects", st.Connects).Msg("MCP server ready")
	s.m.listChanged()
}

// watch serves list refreshes until the session ends or ctx is done, then
// tears the session down.
func (s *server) watch(ctx context.Context, sess *gomcp.ClientSession, att *attempt) {
	ended := make(chan error, 1)
	go func() { ended <- sess.Wait() }()
	var endErr error
	endSeen := false
loop:
	for {
		select {
		case <-s.refresh:
			s.loadLists(ctx, sess)
			s.m.listChanged()
		case endErr = <-ended:
			endSeen = true
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	s.dropSession(sess)
	s.mu.Lock()
	inflight := make([]*inflight, 0, len(s.inflight))
	for _, c := range s.inflight {
		inflight = append(inflight, c)
	}
	s.mu.Unlock()
	if s.cfg.Type != typeHTTP {
		// Over HTTP each request has its own exchange: go-sdk fails the
		// calls itself, and callTool retries those the server never saw.
		for _, c := range inflight {
			c.lost()
		}
	}
	_ = sess.Close()
	if ctx.Err() != nil && !endSeen {
		// The session's end was not seen yet (the manager is closing):
		// wait for it. If it was seen, the manager may have closed since,
		// and nothing more will come.
		<-ended
	}
	if att != nil && att.cleanup != nil {
		att.cleanup()
	}
	if ctx.Err() == nil {
		err := &failure.Error{Kind: failure.Unavailable, Source: failure.SourceMCP, Name: s.cfg.Name, Op: "session",
			Message: "the connection to the server was lost; reconnecting", Err: endErr}
		s.setState(stateRestarting, err)
		s.m.handle(ctx, err)
	}
}

// loadLists lists tools (paginated) and notes whether the server offers
// resources and prompts. A failed listing keeps the last good one.
func (s *server) loadLists(ctx context.Context, sess *gomcp.ClientSession) {
	caps, instructions := &gomcp.ServerCapabilities{}, ""
	if r := sess.InitializeResult(); r != nil {
		if r.Capabilities != nil {
			caps = r.Capabilities
		}
		instructions = r.Instructions
	}
	lctx, cancel := context.WithTimeout(ctx, s.startupTimeout())
	defer cancel()
	var tools []*gomcp.Tool
	var err error
	if caps.Tools != nil {
		for t, e := range sess.Tools(lctx, nil) {
			if e != nil {
				err = e
				break
			}
			tools = append(tools, t)
		}
	}
	s.mu.Lock()
	s.hasRes = caps.Resources != nil
	s.hasPrompts = caps.Prompts != nil
	s.caps = caps
	s.instructions = instructions
	if err == nil {
		s.tools = tools
	}
	s.mu.Unlock()
	if err != nil {
		s.m.handle(ctx, &failure.Error{Kind: failure.From(err).Kind, Source: failure.SourceMCP, Name: s.cfg.Name, Op: "list tools",
			Message: "listing the server's tools failed; keeping the last good list", Err: err})
	}
}
