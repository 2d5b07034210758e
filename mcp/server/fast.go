package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
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
	"github.com/switchboard-dev/switchboard/mcp/internal/rawcall"
)

// maxFastCalls bounds the forwarded calls one stream connection has in
// flight; past it calls take go-sdk's path.
const maxFastCalls = 1024

// errClientCancelled is the cause of a forwarded call the client
// cancelled (notifications/cancelled): no response is sent for it.
var errClientCancelled = errors.New("the client cancelled the call")

// fastPath forwards a stream client's tools/call to a Manager's tool on a
// line connection without go-sdk's decoding on either side: the request
// is taken off the client's connection raw (lineconn.Options.Take), put
// through the same checks as any call (known tool, arguments an object,
// permission, circuit, rate limit), and the server's raw result is
// written back under the client's id. A call anything of that does not
// suit (an ask, a refusal, a tool of another kind, a multi round-trip
// session, a batch) is left to go-sdk, which serves it as before.
type fastPath struct {
	s    *Server
	conn atomic.Pointer[lineconn.Conn]
	ss   atomic.Pointer[gomcp.ServerSession]
	link atomic.Pointer[clientLink] // ss's direct link
	// ctx ends with the server or the connection's session (stop).
	ctx  context.Context
	stop context.CancelFunc

	mu    sync.Mutex
	calls map[string]*fastCall // by the client's raw id

	// serverInfo is the _meta member a 2026-07-28 result carries.
	serverInfo []byte

	work    chan *fastCall // to an idle worker (unbuffered)
	workers atomic.Int32   // the goroutines kept as workers
}

func newFastPath(s *Server) *fastPath {
	ctx, stop := context.WithCancel(s.ctx)
	info, _ := json.Marshal(map[string]any{gomcp.MetaKeyServerInfo: gomcp.Implementation{Name: s.cfg.Name, Version: s.cfg.Version}})
	return &fastPath{s: s, ctx: ctx, stop: stop, calls: map[string]*fastCall{}, work: make(chan *fastCall), serverInfo: info}
}

// Members take reads of a request, its params and their _meta.
var (
	frameFields  = []string{"method", "id", "params"}
	paramsFields = []string{"name", "arguments", "_meta", "requestState", "inputResponses", "requestId"}
	metaFields   = []string{"progressToken", "io.modelcontextprotocol/protocolVersion"}
)

// take is the connection's Take hook: it takes a tools/call it can
// forward, and a cancellation of one it forwarded. It reads the frame in
// one pass (its params and their _meta in one more each).
func (fp *fastPath) take(frame []byte) bool {
	if !bytes.Contains(frame, []byte(`"tools/call"`)) && !bytes.Contains(frame, []byte(`"notifications/cancelled"`)) {
		return false
	}
	var f [3]gjson.Result
	var p [6]gjson.Result
	var m [2]gjson.Result
	if !rawcall.Fields(frame, frameFields, f[:]) || !rawcall.Fields([]byte(f[2].Raw), paramsFields, p[:]) {
		return false
	}
	if p[2].Exists() && !rawcall.Fields([]byte(p[2].Raw), metaFields, m[:]) {
		return false
	}
	method, id := f[0], f[1]
	switch {
	case method.Str == "notifications/cancelled" && !id.Exists():
		return fp.cancel(p[5].Raw)
	case method.Str != "tools/call" || (id.Type != gjson.String && id.Type != gjson.Number):
		return false
	case p[3].Exists() || p[4].Exists() || p[0].Type != gjson.String:
		return false // a multi round-trip retry, or a call go-sdk refuses
	}
	args := p[1]
	if args.Exists() && args.Type != gjson.Null && !args.IsObject() {
		return false
	}
	tok := m[0]
	if tok.Exists() && tok.Type != gjson.String && tok.Type != gjson.Number {
		return false
	}
	c, ok := fp.admit(id.Raw, p[0].Str, m[1].Str)
	if !ok {
		return false
	}
	c.args, c.token = json.RawMessage(args.Raw), tok.Raw
	fp.dispatch(c)
	return true
}

// maxWorkers is how many goroutines serving forwarded calls are kept to
// serve the next ones: a goroutine that served a call has grown its
// stack, and a fresh one per call spent a tenth of the gateway's CPU
// growing it again.
const maxWorkers = 8

// dispatch hands the call to an idle worker, or to a new goroutine (which
// stays as a worker while there are fewer than maxWorkers).
func (fp *fastPath) dispatch(c *fastCall) {
	select {
	case fp.work <- c:
		return
	default:
	}
	fp.s.wg.Go(func() {
		fp.serve(c)
		if fp.workers.Add(1) > maxWorkers {
			fp.workers.Add(-1)
			return
		}
		defer fp.workers.Add(-1)
		for {
			select {
			case c := <-fp.work:
				fp.serve(c)
			case <-fp.ctx.Done():
				return
			}
		}
	})
}

// fastCall is one call being forwarded.
type fastCall struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	id     string // the client's, raw JSON
	name   string
	tool   rawcall.Tool
	spec   agent.ToolSpec
	ss     *gomcp.ServerSession
	mrtr   bool // the session is on 2026-07-28 or later
	args   json.RawMessage
	token  string // the client's progress token, raw JSON ("": none)

	// A multi round-trip session's call that asked a question was
	// answered with it (handedOff) and goes on as a pendingCall.
	pending   *pendingCall
	mu        sync.Mutex
	handedOff bool
	finished  bool // the call ended before asking
	responded bool // answered by early
}

// admit decides whether the call can be forwarded and, if so, registers
// it; the rate limit is charged last, so a call left to go-sdk is
// charged once.
//
// version is the revision the request names (2026-07-28 on): a request
// naming another than the session's is left to go-sdk, which checks it.
func (fp *fastPath) admit(id, name, version string) (*fastCall, bool) {
	s := fp.s
	ss := fp.ss.Load()
	if ss == nil || fp.conn.Load() == nil {
		return nil, false
	}
	ip := ss.InitializeParams()
	if ip == nil || version != "" && version != ip.ProtocolVersion {
		return nil, false
	}
	tool, ok := s.tools.lookup(name)
	if !ok {
		return nil, false
	}
	rt, ok := tool.(rawcall.Tool)
	if !ok || !rt.CanForward() {
		return nil, false
	}
	spec := tool.Spec()
	if s.cfg.Permissions.Decide(spec, nil) != agent.Allow || !s.policy.Available(sourceKey(spec)) {
		return nil, false
	}
	fp.mu.Lock()
	defer fp.mu.Unlock()
	if _, dup := fp.calls[id]; dup || len(fp.calls) >= maxFastCalls || !s.limits.allow(clientStdio) {
		return nil, false
	}
	ctx, cancel := context.WithCancelCause(fp.ctx)
	c := &fastCall{ctx: ctx, cancel: cancel, id: id, name: name, tool: rt, spec: spec, ss: ss, mrtr: usesMRTR(ss)}
	fp.calls[id] = c
	return c, true
}

// cancel cancels the forwarded call of the client's raw id, if there is
// one.
func (fp *fastPath) cancel(id string) bool {
	fp.mu.Lock()
	c, ok := fp.calls[id]
	delete(fp.calls, id)
	fp.mu.Unlock()
	if ok {
		c.cancel(errClientCancelled)
	}
	return ok
}

// forget unregisters c: a cancellation of its id no longer applies (and
// the id may name a later call).
func (fp *fastPath) forget(c *fastCall) {
	fp.mu.Lock()
	if fp.calls[c.id] == c {
		delete(fp.calls, c.id)
	}
	fp.mu.Unlock()
}

// serve forwards the call, answers the client and records the call.
func (fp *fastPath) serve(c *fastCall) {
	s := fp.s
	defer c.cancel(nil)
	defer fp.forget(c)
	start := time.Now()
	rec := AuditRecord{Time: start, Client: clientStdio, Tool: c.name}
	raw, res, err := fp.forward(c)
	if context.Cause(c.ctx) == errClientCancelled {
		// The client gave the call up: it gets no response.
		err = failure.Wrap(failure.Canceled, failureSource(c.spec.Source.Kind), errClientCancelled)
		raw, res = nil, nil
	}
	var out []byte
	rec.Outcome = outcomeOK
	switch {
	case err != nil:
		fe := failure.From(err)
		if fe.Tool == "" {
			fe.Tool = c.name
		}
		s.policy.Handle(c.ctx, fe)
		out, _ = json.Marshal(errorResult(fe.ModelText()))
		rec.Outcome, rec.IsError = outcomeFailed, true
	case res != nil:
		r := toMCPResult(res)
		out, err = json.Marshal(r)
		if err != nil {
			out, _ = json.Marshal(errorResult("the tool's result could not be encoded"))
		}
		rec.IsError = r.IsError || err != nil
	default:
		out, rec.IsError = raw, gjson.GetBytes(raw, "isError").Bool()
	}
	if rec.IsError && rec.Outcome == outcomeOK {
		rec.Outcome = outcomeToolError
	}
	c.mu.Lock()
	handedOff, responded := c.handedOff, c.responded
	c.finished = true
	c.mu.Unlock()
	switch {
	case responded:
		// Answered the moment the server's result was read (early).
	case handedOff:
		// The client was asked a question in answer to its request: the
		// result goes to the retry waiting for it.
		var r gomcp.CallToolResult
		if json.Unmarshal(out, &r) != nil {
			r = *errorResult("the tool's result could not be decoded")
		}
		c.pending.done <- &r
	case context.Cause(c.ctx) != errClientCancelled:
		fp.respond(c, out)
	}
	rec.Duration = time.Since(start)
	if s.cfg.Audit != nil {
		rec.Source = c.spec.Source.String()
		s.cfg.Audit(context.WithoutCancel(c.ctx), rec)
	}
}

// forward runs the call under the failure policy and its timeout, with
// the call context a tool gets (its questions reach the client), as
// runTool does.
func (fp *fastPath) forward(c *fastCall) (raw json.RawMessage, res *agent.Result, err error) {
	s := fp.s
	defer func() {
		if p := recover(); p != nil {
			raw, res = nil, nil
			err = &failure.Error{Kind: failure.Panic, Source: failureSource(c.spec.Source.Kind), Tool: c.spec.Name, Op: "call",
				Message: "forwarding the call panicked", Err: fmt.Errorf("panic: %v\n%s", p, debug.Stack())}
		}
	}()
	timeout := s.cfg.CallTimeout
	if c.spec.Timeout > 0 {
		timeout = c.spec.Timeout
	}
	link := fp.direct(c.ss)
	if c.mrtr {
		link = fp.mrtrLink(c)
	}
	ctx, cancel := context.WithTimeout(withLink(c.ctx, link), timeout)
	defer cancel()
	run := "mcp_" + strconv.FormatUint(callSeq.Add(1), 10)
	s.inflight.Store(run, link)
	defer s.inflight.Delete(run)
	ctx, done := agent.BindCall(ctx, agent.CallBinding{Run: run, ID: run, Tool: c.spec.Name, Source: c.spec.Source, Elicitor: s.Elicitor()})
	defer done()
	hooks := rawcall.Hooks{Result: func(raw json.RawMessage) { fp.early(c, raw) }}
	if c.token != "" {
		hooks.Progress = func(p json.RawMessage) { fp.progress(ctx, c.token, p) }
	}
	err = s.policy.Execute(ctx, sourceKey(c.spec), func(ctx context.Context) error {
		var err error
		raw, res, err = c.tool.Forward(ctx, c.args, hooks)
		return err
	})
	if err != nil && ctx.Err() != nil {
		err = deadlineErr(ctx, c.spec, err)
	}
	return raw, res, err
}

// early answers the client with the server's raw result the moment the
// server's connection reads it, on that connection's reading goroutine
// (after the call's last progress, which that goroutine wrote too),
// rather than after a hand-off to the call's goroutine, which then only
// records the call. A call whose client cancelled it gets no answer, and
// one that asked its client a question (a multi round-trip session)
// answers the retry waiting for it, both from serve.
func (fp *fastPath) early(c *fastCall, raw json.RawMessage) {
	c.mu.Lock()
	if c.handedOff || c.finished || context.Cause(c.ctx) == errClientCancelled {
		c.mu.Unlock()
		return
	}
	c.finished, c.responded = true, true
	c.mu.Unlock()
	fp.forget(c) // answered: the client may use the id again
	fp.respond(c, raw)
}

// direct is the session's direct link (made once: a stream has one
// session).
func (fp *fastPath) direct(ss *gomcp.ServerSession) *clientLink {
	if l := fp.link.Load(); l != nil && l.ss == ss {
		return l
	}
	l := directLink(ss)
	fp.link.Store(l)
	return l
}

// errAbandoned is the cause of a call whose client did not retry it
// after its question.
var errAbandoned = errors.New("the client did not continue the call after its question")

// mrtrLink is how a call of a multi round-trip session asks: its first
// question answers the client's request as an input-required result, as
// startMRTR's would, and the call goes on as a pendingCall that the
// client's retries continue (mrtr.go), made at the first question.
func (fp *fastPath) mrtrLink(c *fastCall) *clientLink {
	var caps *gomcp.ClientCapabilities
	if ip := c.ss.InitializeParams(); ip != nil {
		caps = ip.Capabilities
	}
	ask := func(ctx context.Context, r gomcp.InputRequest) (gomcp.InputResponse, error) {
		c.mu.Lock()
		first, ended := !c.handedOff, c.finished
		if first && !ended {
			c.handedOff = true
			c.pending = &pendingCall{s: fp.s, client: fmt.Sprintf("conn:%p", c.ss), questions: make(chan question),
				done: make(chan *gomcp.CallToolResult, 1), cancel: func() { c.cancel(errAbandoned) }}
		}
		p := c.pending
		c.mu.Unlock()
		switch {
		case ended:
			return nil, errors.New("the call has ended")
		case !first:
			return p.ask(ctx, r)
		}
		return p.askBy(ctx, r, func(q question) error {
			fp.forget(c) // answered: a cancellation of the request no longer applies
			out, err := json.Marshal(p.park(q))
			if err != nil {
				return err
			}
			fp.respond(c, out)
			return nil
		})
	}
	return &clientLink{ss: c.ss, caps: caps, ask: ask}
}

// respond writes the result to the client under its id; from 2026-07-28
// on a result carries the server's identity and its type, as go-sdk's do.
func (fp *fastPath) respond(c *fastCall, result []byte) {
	if c.mrtr {
		result = fp.modernResult(result)
	}
	conn := fp.conn.Load()
	frame := make([]byte, 0, len(result)+len(c.id)+40)
	frame = append(frame, `{"jsonrpc":"2.0","id":`...)
	frame = append(frame, c.id...)
	frame = append(frame, `,"result":`...)
	frame = append(frame, result...)
	frame = append(frame, "}\n"...)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), fp.s.cfg.CallTimeout)
	defer cancel()
	if err := conn.WriteRaw(ctx, frame, &jsonrpc.Response{}); err != nil {
		fp.s.log.Debug().Err(err).Str("tool", c.name).Msg("the result of a forwarded call could not be written")
	}
}

// modernResult is result with _meta's serverInfo and resultType set as
// go-sdk sets them on 2026-07-28 (go-sdk's InputRequests results carry
// their own resultType, which is kept).
func (fp *fastPath) modernResult(result []byte) []byte {
	info := fp.serverInfo
	if f := gjson.GetManyBytes(result, "_meta", "resultType"); !f[0].Exists() && !f[1].Exists() && len(result) > 1 {
		out := make([]byte, 0, len(result)+len(info)+40)
		out = append(out, `{"_meta":`...)
		out = append(out, info...)
		out = append(out, `,"resultType":"complete"`...)
		if rest := bytes.TrimSpace(result[1:]); len(rest) > 0 && rest[0] != '}' {
			out = append(out, ',')
		}
		return append(out, result[1:]...)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(result, &m) != nil {
		return result
	}
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(m["_meta"], &meta)
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[gomcp.MetaKeyServerInfo] = json.RawMessage(gjson.GetBytes(info, `io\.modelcontextprotocol/serverInfo`).Raw)
	m["_meta"], _ = json.Marshal(meta)
	if _, ok := m["resultType"]; !ok {
		m["resultType"] = json.RawMessage(`"complete"`)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return result
	}
	return out
}

// progress writes a server's progress notification to the client under
// the client's token.
func (fp *fastPath) progress(ctx context.Context, token string, params json.RawMessage) {
	f := gjson.GetManyBytes(params, "progress", "total", "message")
	if f[0].Type != gjson.Number {
		return
	}
	frame := make([]byte, 0, 96+len(params))
	frame = append(frame, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`...)
	frame = append(frame, token...)
	frame = append(frame, `,"progress":`...)
	frame = append(frame, f[0].Raw...)
	if f[1].Type == gjson.Number {
		frame = append(frame, `,"total":`...)
		frame = append(frame, f[1].Raw...)
	}
	if f[2].Type == gjson.String {
		frame = append(frame, `,"message":`...)
		frame = append(frame, f[2].Raw...)
	}
	frame = append(frame, "}}\n"...)
	_ = fp.conn.Load().WriteRaw(ctx, frame, &jsonrpc.Request{Method: "notifications/progress"})
}

// deadlineErr is err of a call whose context ended, as a Timeout or
// Canceled failure (what the call's end says, unless err says it).
func deadlineErr(ctx context.Context, spec agent.ToolSpec, err error) error {
	kind := failure.Canceled
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		kind = failure.Timeout
	}
	if fe := failure.From(err); fe.Kind != failure.Timeout && fe.Kind != failure.Canceled {
		return &failure.Error{Kind: kind, Source: failureSource(spec.Source.Kind), Name: spec.Source.Name,
			Tool: spec.Name, Op: "call", Err: err}
	}
	return err
}
