package a2a

import (
	"context"
	"iter"
	"sync"

	"github.com/switchboard-dev/switchboard/agent"
)

// sessionCache keeps one agent session per A2A context, so that tasks in
// the same context continue one conversation. It is bounded; the oldest
// idle context is forgotten first.
type sessionCache struct {
	mu    sync.Mutex
	max   int
	m     map[string]*sessionEntry
	order []string
}

type sessionEntry struct {
	s    *agent.Session
	busy bool
}

func newSessionCache(max int) *sessionCache {
	return &sessionCache{max: max, m: map[string]*sessionEntry{}}
}

// acquire returns the context's session, or a fresh one when it is busy
// with another task; release must be called when the run ends.
func (c *sessionCache) acquire(contextID string, a *agent.Agent) (*agent.Session, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[contextID]
	if ok && e.busy {
		return a.NewSession(), func() {}
	}
	if !ok {
		e = &sessionEntry{s: a.NewSession()}
		c.m[contextID] = e
		c.order = append(c.order, contextID)
		c.evict()
	}
	e.busy = true
	return e.s, func() {
		c.mu.Lock()
		e.busy = false
		c.mu.Unlock()
	}
}

func (c *sessionCache) evict() {
	for tries := len(c.order); len(c.m) > c.max && tries > 0; tries-- {
		id := c.order[0]
		c.order = c.order[1:]
		if e, ok := c.m[id]; ok && e.busy {
			c.order = append(c.order, id) // in use: keep, try the next
			continue
		}
		delete(c.m, id)
	}
}

// stream starts a run of the server's runner on text: in the context's
// session for an *agent.Agent, afresh for any other runner. release must be
// called when the run ends.
func (s *Server) stream(ctx context.Context, contextID, text string) (iter.Seq2[agent.Event, error], func()) {
	if a, ok := s.cfg.Agent.(*agent.Agent); ok {
		sess, release := s.sessions.acquire(contextID, a)
		return sess.Stream(ctx, text), release
	}
	return s.cfg.Agent.Stream(ctx, text), func() {}
}
