package server

import (
	"container/list"
	"sync"

	"golang.org/x/time/rate"
)

// defaultMaxClients bounds the rate limiters kept.
const defaultMaxClients = 10_000

// limiters is one token bucket per client, the least recently used dropped
// past max (a dropped client starts again with a full bucket).
type limiters struct {
	limit rate.Limit
	burst int
	max   int

	mu    sync.Mutex
	byKey map[string]*list.Element
	lru   *list.List // of *limiterEntry, most recent first
}

type limiterEntry struct {
	key string
	lim *rate.Limiter
}

func newLimiters(limit rate.Limit, burst, max int) *limiters {
	if burst == 0 {
		burst = 1 + int(limit)
	}
	if max == 0 {
		max = defaultMaxClients
	}
	return &limiters{limit: limit, burst: burst, max: max, byKey: map[string]*list.Element{}, lru: list.New()}
}

// allow takes a token of client's bucket; with no limit configured it
// always allows.
func (l *limiters) allow(client string) bool {
	if l.limit == 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.byKey[client]; ok {
		l.lru.MoveToFront(e)
		return e.Value.(*limiterEntry).lim.Allow()
	}
	ent := &limiterEntry{key: client, lim: rate.NewLimiter(l.limit, l.burst)}
	l.byKey[client] = l.lru.PushFront(ent)
	for l.lru.Len() > l.max {
		last := l.lru.Back()
		l.lru.Remove(last)
		delete(l.byKey, last.Value.(*limiterEntry).key)
	}
	return ent.lim.Allow()
}

// size is the number of clients tracked.
func (l *limiters) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lru.Len()
}
