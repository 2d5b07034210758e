package mcp

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboard-dev/switchboard/mcp/internal/lineconn"
)

// nudgeIDPrefix starts the ID of every ping a nudger sends.
const nudgeIDPrefix = "switchboard-nudge-"

// A stdio server is first pinged after nudgeFirst with nothing read, then
// after twice as long each time, up to nudgeMax.
const (
	nudgeFirst = time.Second
	nudgeMax   = 30 * time.Second
)

// nudger pings a stdio server while a request to it is overdue: after
// first with nothing read from the server, then after twice as long each
// time up to max. The ping's answer is dropped.
//
// It works around a Go 1.26 runtime race (seen with go1.26.8): a
// goroutine entering a blocking read(2) just as a GC stops the world can
// hold the stop-the-world until the runtime's sysmon thread wakes, up to
// 60 s in a process without timers. A Go stdio server reads its stdin in
// a blocking read (go-sdk's StdioTransport does), and while its client
// waits for an answer no more input comes to end that read: a tool call
// in a few hundred thousand took exactly 60 s. Any input ends the read
// and with it the stall. A ping is the one request every MCP server must
// answer at any time, so it is harmless to servers the race does not
// touch; the backoff keeps a long-running call to a few pings.
type nudger struct {
	c          *lineconn.Conn // set once the connection is made
	first, max time.Duration

	mu       sync.Mutex
	calls    map[jsonrpc.ID]struct{} // requests written and not answered
	lastRead time.Time
	wait     time.Duration
	timer    *time.Timer
	seq      int64
}

func newNudger(first, max time.Duration) *nudger {
	return &nudger{first: first, max: max, wait: first, calls: map[jsonrpc.ID]struct{}{}}
}

// wrote records a message written to the server.
func (n *nudger) wrote(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return
	}
	if !req.ID.IsValid() {
		if req.Method == "notifications/cancelled" {
			// The cancelled request may never be answered.
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					n.mu.Lock()
					delete(n.calls, id)
					n.mu.Unlock()
				}
			}
		}
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.calls) == 0 {
		// Count the wait from the first request outstanding.
		n.lastRead, n.wait = time.Now(), n.first
	}
	n.calls[req.ID] = struct{}{}
	if n.timer == nil {
		n.timer = time.AfterFunc(n.wait, n.fire)
	}
}

// read records a message read from the server and reports whether it is
// the answer to a nudge, which the connection drops.
func (n *nudger) read(msg jsonrpc.Message) (ours bool) {
	resp, isResp := msg.(*jsonrpc.Response)
	if isResp {
		if s, ok := resp.ID.Raw().(string); ok && strings.HasPrefix(s, nudgeIDPrefix) {
			ours = true
		}
	}
	n.mu.Lock()
	n.lastRead = time.Now()
	if !ours {
		n.wait = n.first
		if isResp {
			delete(n.calls, resp.ID)
		}
	}
	n.mu.Unlock()
	return ours
}

// fire pings the server if a request is outstanding and nothing was read
// for the current wait, and rearms the timer while requests are
// outstanding.
func (n *nudger) fire() {
	n.mu.Lock()
	select {
	case <-n.c.Done():
		n.timer = nil
		n.mu.Unlock()
		return
	default:
	}
	if len(n.calls) == 0 {
		n.timer = nil
		n.mu.Unlock()
		return
	}
	next := n.wait - time.Since(n.lastRead)
	var ping []byte
	if next <= 0 {
		n.seq++
		ping = []byte(`{"jsonrpc":"2.0","id":"` + nudgeIDPrefix + strconv.FormatInt(n.seq, 10) + `","method":"ping"}` + "\n")
		n.wait = min(2*n.wait, n.max)
		next = n.wait
	}
	n.timer = time.AfterFunc(next, n.fire)
	n.mu.Unlock()
	if ping != nil {
		_ = n.c.WriteLine(context.Background(), ping) // bounded by the stall bound
	}
}

// stop stops the timer.
func (n *nudger) stop() {
	n.mu.Lock()
	if n.timer != nil {
		n.timer.Stop()
		n.timer = nil
	}
	n.mu.Unlock()
}
