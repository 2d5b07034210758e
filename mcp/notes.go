package mcp

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/rs/zerolog"
)

// Bounds of a connection's queue of log and progress notifications.
const (
	maxQueuedNotes     = 1024
	maxQueuedNoteBytes = 4 << 20
	// dropReportEvery is how often, at most, a flood still going on is
	// reported.
	dropReportEvery = 10 * time.Second
)

// noteQueue takes a server's log and progress notifications off the
// connection before go-sdk sees them (go-sdk queues incoming
// notifications without bound) and hands them to handle, one at a time,
// on a goroutine of its own. Under pressure (more than maxQueuedNotes, or
// maxQueuedNoteBytes of parameters, waiting) new ones are dropped and the
// drops are reported in one log line once the queue has drained (or every
// dropReportEvery while the flood lasts, and at close).
type noteQueue struct {
	handle func(method string, params json.RawMessage)
	log    zerolog.Logger

	ch      chan *jsonrpc.Request
	bytes   atomic.Int64
	dropped atomic.Int64

	stopOnce sync.Once
	stopped  chan struct{}
	done     chan struct{}

	// flush's bookkeeping: notes queued and handled so far, and the
	// flushes waiting for a count of handled notes.
	mu       sync.Mutex
	queued   int64
	handled  int64
	flushers []flusher
}

// flusher is a flush waiting until handled reaches upTo.
type flusher struct {
	upTo int64
	done chan struct{}
}

// Methods the queue takes.
const (
	methodLog      = "notifications/message"
	methodProgress = "notifications/progress"
)

func newNoteQueue(log zerolog.Logger, handle func(method string, params json.RawMessage)) *noteQueue {
	q := &noteQueue{handle: handle, log: log, ch: make(chan *jsonrpc.Request, maxQueuedNotes),
		stopped: make(chan struct{}), done: make(chan struct{})}
	go q.run()
	return q
}

// offer takes msg if it is a log or progress notification (queued, or
// dropped under pressure) and reports whether it did.
func (q *noteQueue) offer(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.ID.IsValid() || req.Method != methodLog && req.Method != methodProgress {
		return false
	}
	n := int64(len(req.Params))
	if q.bytes.Add(n) > maxQueuedNoteBytes {
		q.bytes.Add(-n)
		q.dropped.Add(1)
		return true
	}
	q.mu.Lock()
	select {
	case q.ch <- req:
		q.queued++
	default:
		q.bytes.Add(-n)
		q.dropped.Add(1)
	}
	q.mu.Unlock()
	return true
}

// flush waits, at most d, until every note queued so far was handled: a
// call's last progress notifications are read before its result, and
// must reach the call before it returns (later ones are dropped).
func (q *noteQueue) flush(d time.Duration) {
	q.mu.Lock()
	if q.handled >= q.queued {
		q.mu.Unlock()
		return
	}
	f := flusher{upTo: q.queued, done: make(chan struct{})}
	q.flushers = append(q.flushers, f)
	q.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-f.done:
		return
	case <-t.C:
	case <-q.done:
	}
	// Given up: drop the wait, so that a stuck handler does not collect
	// one per call.
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, g := range q.flushers {
		if g.done == f.done {
			q.flushers = append(q.flushers[:i], q.flushers[i+1:]...)
			break
		}
	}
}

// handledOne counts a note handled and releases the flushes it completes.
func (q *noteQueue) handledOne() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.handled++
	kept := q.flushers[:0]
	for _, f := range q.flushers {
		if f.upTo <= q.handled {
			close(f.done)
		} else {
			kept = append(kept, f)
		}
	}
	clear(q.flushers[len(kept):])
	q.flushers = kept
}

func (q *noteQueue) run() {
	defer close(q.done)
	lastReport := time.Now()
	for {
		select {
		case <-q.stopped:
			q.report()
			return
		default:
		}
		select {
		case req := <-q.ch:
			q.bytes.Add(-int64(len(req.Params)))
			q.handle(req.Method, req.Params)
			q.handledOne()
			if q.dropped.Load() > 0 && (len(q.ch) == 0 || time.Since(lastReport) > dropReportEvery) {
				q.report()
				lastReport = time.Now()
			}
		case <-q.stopped:
			q.report()
			return
		}
	}
}

// report logs the drops since the last report, if any.
func (q *noteQueue) report() {
	if n := q.dropped.Swap(0); n > 0 {
		q.log.Warn().Int64("dropped", n).Int("queue_bound", maxQueuedNotes).
			Msg("the server sent log and progress notifications faster than they could be handled; dropped some")
	}
}

// stop ends the goroutine, waiting at most noteStopWait for the handler
// it is in; what is still queued is dropped uncounted. The drops are
// reported before it returns.
func (q *noteQueue) stop() {
	q.stopOnce.Do(func() { close(q.stopped) })
	t := time.NewTimer(noteStopWait)
	defer t.Stop()
	select {
	case <-q.done:
	case <-t.C:
		q.report() // the handler is slow; report now, it ends on its own
	}
}

// noteFlushWait bounds how long a call that returned waits for the
// progress notifications read before its result to be handled.
const noteFlushWait = 100 * time.Millisecond

// noteStopWait bounds how long closing a connection waits for a log or
// progress handler (OnLog must not block; this holds if it does).
const noteStopWait = time.Second

// Notifications that go-sdk must see (they invalidate its caches) but
// that mean the same however often they come: while one is waiting in
// go-sdk's queue, another like it (for resources/updated: for the same
// URI) is dropped. At most maxPendingKeys wait; beyond that new ones are
// dropped and the drops logged (at most once per dropReportEvery). One
// pending for longer than coalesceFor (go-sdk refused its parameters, say)
// no longer holds the next back, so at most one per key and coalesceFor
// reaches go-sdk's queue whatever happens to them.
const (
	maxPendingKeys = 1024
	coalesceFor    = 5 * time.Second
)

var coalescedMethods = map[string]bool{
	"notifications/tools/list_changed":     true,
	"notifications/prompts/list_changed":   true,
	"notifications/resources/list_changed": true,
	"notifications/resources/updated":      true,
}

// coalescer tracks the coalesced notifications handed to go-sdk and not
// yet handled. One serves a server across its sessions; reset forgets
// what an ended session left pending.
type coalescer struct {
	log     zerolog.Logger
	mu      sync.Mutex
	pending map[string]time.Time // since when
	dropped int
	lastLog time.Time
}

// noteKey is the key under which a coalesced notification is pending:
// its method, and for resources/updated its URI too.
func noteKey(method, uri string) string {
	if method != "notifications/resources/updated" {
		return method
	}
	return method + " " + uri
}

// uriOf is the uri of a resources/updated notification's parameters.
func uriOf(method string, params json.RawMessage) string {
	if method != "notifications/resources/updated" {
		return ""
	}
	var p struct {
		URI string `json:"uri"`
	}
	_ = json.Unmarshal(params, &p)
	return p.URI
}

// drop reports whether msg is a coalesced notification to drop; if it is
// one to pass on, it is recorded as pending.
func (k *coalescer) drop(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.ID.IsValid() || !coalescedMethods[req.Method] {
		return false
	}
	key := noteKey(req.Method, uriOf(req.Method, req.Params))
	k.mu.Lock()
	defer k.mu.Unlock()
	now := time.Now()
	if since, ok := k.pending[key]; ok {
		if now.Sub(since) < coalesceFor {
			return true
		}
		k.pending[key] = now
		return false
	}
	if len(k.pending) >= maxPendingKeys {
		for key, since := range k.pending {
			if now.Sub(since) >= coalesceFor {
				delete(k.pending, key) // never handled: no longer pending
			}
		}
	}
	if len(k.pending) >= maxPendingKeys {
		k.dropped++
		if time.Since(k.lastLog) > dropReportEvery {
			k.log.Warn().Int("dropped", k.dropped).Int("pending_bound", maxPendingKeys).
				Msg("the server sent more distinct change notifications than could be handled; dropped some")
			k.dropped, k.lastLog = 0, time.Now()
		}
		return true
	}
	if k.pending == nil {
		k.pending = map[string]time.Time{}
	}
	k.pending[key] = now
	return false
}

// handled records that go-sdk handed a coalesced notification to its
// handler: the next one like it is passed on.
func (k *coalescer) handled(method, uri string) {
	k.mu.Lock()
	delete(k.pending, noteKey(method, uri))
	k.mu.Unlock()
}

// reset forgets what is pending (a new session).
func (k *coalescer) reset() {
	k.mu.Lock()
	k.pending = nil
	k.mu.Unlock()
}
