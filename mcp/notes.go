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
	select {
	case q.ch <- req:
	default:
		q.bytes.Add(-n)
		q.dropped.Add(1)
	}
	return true
}

func (q *noteQueue) run() {
	defer close(q.done)
	lastReport := time.Now()
	for {
		select {
		case req := <-q.ch:
			q.bytes.Add(-int64(len(req.Params)))
			q.handle(req.Method, req.Params)
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

// stop ends the goroutine; what is still queued is dropped uncounted.
func (q *noteQueue) stop() {
	q.stopOnce.Do(func() { close(q.stopped) })
}
