package mcp

import (
	"context"
	"fmt"
	"sync"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/mcp/internal/oauth"
)

// A server with OAuth logins per user (WithUser) gives each user other
// than the main session's a session of their own: a server that binds a
// session to the user who opened it (as the MCP authorization spec says it
// should) refuses another user's token on it. User sessions are connected
// on a user's first request, reused after, dropped on a session-missing or
// connection error (the next request connects again), closed after
// userSessionIdle without a request and, past maxUserSessions, the least
// recently used first. They have no restart loop: the main
// session's supervisor closes them all when the Manager closes.
const (
	userSessionIdle = 10 * time.Minute
	maxUserSessions = 256
)

// userSessions are a server's sessions of other users than the main one.
type userSessions struct {
	mu     sync.Mutex
	idle   time.Duration // 0: userSessionIdle (tests shorten it)
	max    int           // 0: maxUserSessions
	by     map[string]*userSess
	closed bool
	wg     sync.WaitGroup // the sessions' watchers
}

// userSess is one user's session, or its connection under way.
type userSess struct {
	user   string
	ready  chan struct{} // closed when the connection attempt ended
	sess   *gomcp.ClientSession
	err    error
	used   time.Time
	timer  *time.Timer // the idle close
	closed bool
}

// otherUser returns the user ctx names when requests for them need a
// session of their own: an http server with OAuth logins, and a user other
// than the one of the context the Manager was made with.
func (s *server) otherUser(ctx context.Context) (string, bool) {
	id, ok := oauth.UserFrom(ctx)
	if !ok || s.cfg.Type != typeHTTP {
		return "", false
	}
	if main, _ := oauth.UserFrom(s.m.ctx); main == id {
		return "", false
	}
	if h, err := s.oauthHandler(); h == nil || err != nil {
		return "", false
	}
	return id, true
}

// userSession returns user's session, connecting it on first use (the
// initialize carries that user's token, so the server binds it to them).
func (s *server) userSession(ctx context.Context, user string) (*gomcp.ClientSession, error) {
	us := &s.users
	for {
		us.mu.Lock()
		if us.closed || s.m.ctx.Err() != nil {
			us.mu.Unlock()
			return nil, &failure.Error{Kind: failure.Unavailable, Source: failure.SourceMCP, Name: s.cfg.Name,
				Message: fmt.Sprintf("MCP server %q is closed", s.cfg.Name)}
		}
		e := us.by[user]
		if e == nil {
			if err := s.evictLocked(); err != nil {
				us.mu.Unlock()
				return nil, err
			}
			e = &userSess{user: user, ready: make(chan struct{}), used: time.Now()}
			if us.by == nil {
				us.by = map[string]*userSess{}
			}
			us.by[user] = e
			us.mu.Unlock()
			return s.connectUser(ctx, e)
		}
		e.used = time.Now()
		us.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		us.mu.Lock()
		sess, err, gone := e.sess, e.err, us.by[user] != e
		us.mu.Unlock()
		if sess != nil && !gone {
			return sess, nil
		}
		if err != nil {
			return nil, err
		}
		// Dropped meanwhile: connect again.
	}
}

// connectUser connects e's session through the main session's connect
// code. The caller's ctx bounds the attempt; the session lives until it is
// closed (idle, evicted, dropped, or the Manager closes).
func (s *server) connectUser(ctx context.Context, e *userSess) (*gomcp.ClientSession, error) {
	us := &s.users
	lctx, cancel := context.WithCancel(oauth.WithUser(s.m.ctx, e.user))
	stop := context.AfterFunc(ctx, cancel)
	sess, att, err := s.connect(lctx)
	if err == nil && !stop() {
		_ = sess.Close()
		if att != nil && att.cleanup != nil {
			att.cleanup()
		}
		sess, err = nil, ctx.Err()
	}
	us.mu.Lock()
	defer close(e.ready)
	if err == nil && (us.closed || us.by[e.user] != e) {
		// The Manager closed, or the entry was dropped, while connecting.
		us.mu.Unlock()
		_ = sess.Close() // not under the lock: it makes a request
		if att != nil && att.cleanup != nil {
			att.cleanup()
		}
		us.mu.Lock()
		sess, err = nil, &failure.Error{Kind: failure.Unavailable, Source: failure.SourceMCP, Name: s.cfg.Name,
			Message: fmt.Sprintf("MCP server %q closed while connecting a user's session", s.cfg.Name)}
	}
	defer us.mu.Unlock()
	if err != nil {
		cancel()
		if us.by[e.user] == e {
			delete(us.by, e.user) // the next request tries again
		}
		if ctx.Err() == nil {
			e.err = err // else the waiters connect on their own
		}
		return nil, err
	}
	e.sess = sess
	s.log.Debug().Str("user", e.user).Str("session", sess.ID()).Msg("user session ready")
	us.wg.Add(1)
	go s.watchUser(e, att, cancel)
	e.timer = time.AfterFunc(us.idleBound(), func() { s.idleCheck(e) })
	return sess, nil
}

// watchUser waits for e's session to end, forgets it and cleans up.
func (s *server) watchUser(e *userSess, att *attempt, cancel context.CancelFunc) {
	defer s.users.wg.Done()
	_ = e.sess.Wait()
	s.users.mu.Lock()
	s.dropUserLocked(e)
	s.users.mu.Unlock()
	cancel()
	if att != nil && att.cleanup != nil {
		att.cleanup()
	}
}

// idleCheck closes e's session when no request used it for the idle bound
// (go-sdk's Close lets the calls in flight finish first).
func (s *server) idleCheck(e *userSess) {
	us := &s.users
	us.mu.Lock()
	defer us.mu.Unlock()
	if e.closed {
		return
	}
	bound := us.idleBound()
	if left := bound - time.Since(e.used); left > 0 {
		e.timer.Reset(left)
		return
	}
	s.log.Debug().Str("user", e.user).Msg("closing an idle user session")
	s.closeUserLocked(e)
}

func (us *userSessions) idleBound() time.Duration {
	if us.idle > 0 {
		return us.idle
	}
	return userSessionIdle
}

// evictLocked makes room for one more session: past the bound it closes
// the least recently used connected session (its calls in flight finish).
func (s *server) evictLocked() error {
	us := &s.users
	limit := us.max
	if limit <= 0 {
		limit = maxUserSessions
	}
	if len(us.by) < limit {
		return nil
	}
	var lru *userSess
	for _, e := range us.by {
		if e.sess != nil && (lru == nil || e.used.Before(lru.used)) {
			lru = e
		}
	}
	if lru == nil {
		return &failure.Error{Kind: failure.Unavailable, Source: failure.SourceMCP, Name: s.cfg.Name,
			Message: fmt.Sprintf("MCP server %q has %d user sessions, all still connecting; try again later", s.cfg.Name, limit)}
	}
	s.log.Debug().Str("user", lru.user).Msg("closing the least recently used user session")
	s.closeUserLocked(lru)
	return nil
}

// closeUserLocked forgets e and closes its session (the watcher cleans
// up). go-sdk's Close waits for the session's calls in flight, then sends
// the DELETE with its own bound.
func (s *server) closeUserLocked(e *userSess) {
	s.dropUserLocked(e)
	s.users.wg.Add(1)
	go func() { // not under the lock: it makes a request
		defer s.users.wg.Done()
		_ = e.sess.Close()
	}()
}

func (s *server) dropUserLocked(e *userSess) {
	if s.users.by[e.user] == e {
		delete(s.users.by, e.user)
	}
	e.closed = true
	if e.timer != nil {
		e.timer.Stop()
	}
}

// dropUserSession forgets sess if it is a user's session (after a lost
// connection or a missing HTTP session), closing it; it reports whether it
// was one.
func (s *server) dropUserSession(sess *gomcp.ClientSession) bool {
	if sess == nil {
		return false
	}
	us := &s.users
	us.mu.Lock()
	defer us.mu.Unlock()
	for _, e := range us.by {
		if e.sess == sess {
			s.closeUserLocked(e)
			return true
		}
	}
	return false
}

// closeUsers closes every user session and waits for their watchers.
func (s *server) closeUsers() {
	us := &s.users
	us.mu.Lock()
	us.closed = true
	var open []*gomcp.ClientSession
	for _, e := range us.by {
		if e.sess != nil {
			open = append(open, e.sess)
		}
		s.dropUserLocked(e)
	}
	us.mu.Unlock()
	for _, sess := range open {
		_ = sess.Close()
	}
	us.wg.Wait()
}
