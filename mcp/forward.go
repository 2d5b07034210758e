package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/lineconn"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
	"github.com/switchboard-dev/switchboard/mcp/internal/rawcall"
)

// fwdPrefix starts the request id and progress token of every call the
// forwarder makes. go-sdk's client numbers its requests, so a string id
// cannot be one of its own.
const fwdPrefix = "sbf-"

// cancelGrace bounds the notifications/cancelled sent for a forwarded
// call whose context ended.
const cancelGrace = time.Second

// forwarder is the raw calls (rawcall.Tool) a server has in flight on its
// line connection: their answers and progress are taken off the stream
// by take, on the connection's reading goroutine, before go-sdk decodes
// anything.
type forwarder struct {
	seq   atomic.Uint64
	mu    sync.Mutex
	calls map[string]*fwdCall
}

// fwdCall is one forwarded call waiting for its answer.
type fwdCall struct {
	done chan rawReply // buffered: take never blocks
	// rawMax is the largest result returned raw (< 0: every result is
	// converted); early is handed such a result before the reply is
	// (rawcall.Hooks.Result).
	rawMax int
	early  func(json.RawMessage)

	mu       sync.Mutex
	progress func(json.RawMessage) // nil once the call returned
}

// rawReply is a response's result or error, raw, or the error that
// ended the connection before it came.
type rawReply struct {
	result, err json.RawMessage
	broke       error
}

func (f *forwarder) add(id string, c *fwdCall) {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]*fwdCall{}
	}
	f.calls[id] = c
	f.mu.Unlock()
}

func (f *forwarder) remove(id string) {
	f.mu.Lock()
	delete(f.calls, id)
	f.mu.Unlock()
}

func (f *forwarder) lookup(id string) *fwdCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[id]
}

// take takes the answer to a forwarded call, or a progress notification
// for one, off the stream. Frames that merely mention the prefix (a
// result quoting it) are left to go-sdk unless their id or token is one
// of the calls in flight.
func (f *forwarder) take(frame []byte) (jsonrpc.ID, bool) {
	if !bytes.Contains(frame, []byte(`"`+fwdPrefix)) {
		return jsonrpc.ID{}, false
	}
	var fields [5]gjson.Result
	if !rawcall.Fields(frame, answerFields, fields[:]) {
		return jsonrpc.ID{}, false
	}
	id, method := fields[0], fields[1]
	if method.Exists() {
		var tok [1]gjson.Result
		if method.Str != "notifications/progress" || id.Exists() || !rawcall.Fields([]byte(fields[4].Raw), progressFields, tok[:]) ||
			tok[0].Type != gjson.String {
			return jsonrpc.ID{}, false
		}
		c := f.lookup(tok[0].Str)
		if c == nil {
			return jsonrpc.ID{}, false
		}
		c.report(json.RawMessage(fields[4].Raw))
		return jsonrpc.ID{}, true
	}
	if id.Type != gjson.String {
		return jsonrpc.ID{}, false
	}
	f.mu.Lock()
	c := f.calls[id.Str]
	delete(f.calls, id.Str)
	f.mu.Unlock()
	if c == nil {
		return jsonrpc.ID{}, false
	}
	reply := rawReply{result: json.RawMessage(fields[2].Raw), err: json.RawMessage(fields[3].Raw)}
	if !fields[2].Exists() && !fields[3].Exists() {
		reply.err = json.RawMessage(`{"code":-32603,"message":"the server answered with neither a result nor an error"}`)
	}
	if c.early != nil && !fields[3].Exists() && fields[2].IsObject() && len(reply.result) <= c.rawMax {
		c.finish() // no progress after the result
		c.early(reply.result)
	}
	c.done <- reply
	jid, _ := jsonrpc.MakeID(id.Str)
	return jid, true
}

// Members take reads of a server's message, and of a progress
// notification's params.
var (
	answerFields   = []string{"id", "method", "result", "error", "params"}
	progressFields = []string{"progressToken"}
)

// fail answers every call in flight with err, the error that ended
// reading their connection (a call made on a later connection is not in
// flight on this one yet: its write comes after the new connection's
// first read).
func (f *forwarder) fail(err error) {
	f.mu.Lock()
	calls := f.calls
	f.calls = nil
	f.mu.Unlock()
	for _, c := range calls {
		select {
		case c.done <- rawReply{broke: err}:
		default:
		}
	}
}

// report delivers progress unless the call returned.
func (c *fwdCall) report(params json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.progress != nil {
		c.progress(params)
	}
}

// finish stops progress delivery.
func (c *fwdCall) finish() {
	c.mu.Lock()
	c.progress = nil
	c.mu.Unlock()
}

// CanForward reports whether the tool's server is connected over a line
// connection of the Manager's own (rawcall.Tool), on a protocol revision
// before multi round-trip requests: from 2026-07-28 on a result may be a
// question, which go-sdk's client answers and retries.
func (t *tool) CanForward() bool {
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil || s.conn == nil || s.conn.Broken() {
		return false
	}
	v := s.conn.Protocol()
	return v != "" && v < mrtrProtocol
}

// mrtrProtocol is the first revision with multi round-trip requests.
const mrtrProtocol = "2026-07-28"

// Forward calls the tool with raw arguments (rawcall.Tool).
func (t *tool) Forward(ctx context.Context, args json.RawMessage, hooks rawcall.Hooks) (json.RawMessage, *agent.Result, error) {
	return t.s.forwardCall(ctx, t.spec.Name, t.orig, t.origJSON, t.output, args, hooks)
}

// forwardCall is callTool on the raw arguments, written to the server's
// line connection as they came and answered with the server's raw result.
// A server reached otherwise (HTTP) is called through callTool.
func (s *server) forwardCall(ctx context.Context, modelName, orig string, origJSON, output []byte, args json.RawMessage, hooks rawcall.Hooks) (json.RawMessage, *agent.Result, error) {
	sess, err := s.session(ctx, 0)
	if err != nil {
		return nil, nil, s.callErr(ctx, nil, nil, modelName, err)
	}
	s.mu.Lock()
	conn := s.conn
	if s.sess != sess {
		conn = nil
	}
	s.mu.Unlock()
	if conn == nil {
		res, err := s.callTool(ctx, modelName, orig, output, args)
		return nil, res, err
	}
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = json.RawMessage("{}")
	} else if args[0] != '{' {
		return nil, nil, &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceMCP, Name: s.cfg.Name, Tool: modelName,
			Message: "the arguments must be a JSON object"}
	}
	cctx, cancel, touch, stop := s.callContext(ctx, modelName)
	defer stop()
	id := fwdPrefix + strconv.FormatUint(s.fwd.seq.Add(1), 36)
	rc := &fwdCall{done: make(chan rawReply, 1), early: hooks.Result, rawMax: s.m.cfg.SaveResultsOver, progress: func(p json.RawMessage) {
		if touch != nil {
			touch()
		}
		if hooks.Progress != nil {
			hooks.Progress(p)
		}
	}}
	if len(output) > 0 {
		rc.rawMax = -1
	}
	call, _ := agent.CallFromContext(ctx)
	fl := &inflight{call: call, cancel: cancel, server: s.cfg.Name}
	s.addInflight(id, fl) // a lost connection cancels the call; questions find its run
	s.fwd.add(id, rc)
	defer func() {
		s.fwd.remove(id)
		s.removeInflight(id)
		rc.finish()
		fl.finish()
	}()
	frame, err := callFrame(cctx, id, origJSON, args)
	if err != nil {
		return nil, nil, &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceMCP, Name: s.cfg.Name, Tool: modelName,
			Message: "the call could not be encoded", Err: err}
	}
	jid, _ := jsonrpc.MakeID(id)
	if err := conn.WriteRaw(cctx, frame, &jsonrpc.Request{ID: jid, Method: "tools/call"}); err != nil {
		return nil, nil, s.callErr(cctx, sess, err, modelName, context.Cause(cctx))
	}
	var reply rawReply
	select {
	case reply = <-rc.done:
	case <-cctx.Done():
		// Forgotten before the server hears of it: a server that answers
		// the cancelled request (go-sdk's does, with its context's error)
		// must not have that answer taken for the call's result.
		s.fwd.remove(id)
		sendCancel(conn, id)
		return nil, nil, s.callErr(cctx, sess, cctx.Err(), modelName, context.Cause(cctx))
	}
	if reply.broke != nil {
		return nil, nil, s.callErr(cctx, sess, reply.broke, modelName, nil)
	}
	if len(reply.err) > 0 {
		var we jsonrpc.Error
		if err := json.Unmarshal(reply.err, &we); err != nil {
			return nil, nil, s.callErr(cctx, sess, fmt.Errorf("the server's error is malformed: %w", err), modelName, nil)
		}
		return nil, nil, s.callErr(cctx, sess, &we, modelName, nil)
	}
	if len(reply.result) == 0 || reply.result[0] != '{' {
		return nil, nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceMCP, Name: s.cfg.Name, Tool: modelName,
			Message: "the server's result is not a JSON object"}
	}
	if len(reply.result) <= rc.rawMax {
		return reply.result, nil, nil
	}
	var res gomcp.CallToolResult
	if err := json.Unmarshal(reply.result, &res); err != nil {
		return nil, nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceMCP, Name: s.cfg.Name, Tool: modelName,
			Message: "the server's result is not a valid tools/call result", Err: err}
	}
	out, err := s.convertResult(modelName, output, &res)
	return nil, out, err
}

// callFrame is the tools/call request of a forwarded call, one line
// (name: the tool's name as a JSON string).
func callFrame(ctx context.Context, id string, name []byte, args json.RawMessage) ([]byte, error) {
	var meta map[string]any
	if call, _ := agent.CallFromContext(ctx); call.IdempotencyKey() != "" {
		meta = map[string]any{idempotencyMetaKey: call.IdempotencyKey()}
	}
	meta = telemetry.InjectMeta(ctx, meta)
	b := make([]byte, 0, 96+len(name)+len(args))
	b = append(b, `{"jsonrpc":"2.0","id":"`...)
	b = append(b, id...)
	b = append(b, `","method":"tools/call","params":{"name":`...)
	b = append(b, name...)
	b = append(b, `,"arguments":`...)
	b = append(b, args...)
	b = append(b, `,"_meta":{"progressToken":"`...)
	b = append(b, id...)
	b = append(b, '"')
	if len(meta) > 0 {
		extra, err := json.Marshal(meta)
		if err != nil {
			return nil, err
		}
		b = append(b, ',')
		b = append(b, extra[1:len(extra)-1]...)
	}
	return append(b, "}}}\n"...), nil
}

// sendCancel tells the server a forwarded call was given up, within
// cancelGrace.
func sendCancel(conn *lineconn.Conn, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
	defer cancel()
	params := json.RawMessage(`{"requestId":"` + id + `","reason":"the call was cancelled"}`)
	frame := append([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":`), params...)
	frame = append(frame, "}\n"...)
	_ = conn.WriteRaw(ctx, frame, &jsonrpc.Request{Method: "notifications/cancelled", Params: params})
}
