package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/schema"
	"github.com/switchboard-dev/switchboard/mcp"
)

// stopGrace is how long a tool that ignores its cancelled context is waited
// for before its call is answered without it (as in an agent).
const stopGrace = 2 * time.Second

// callSeq numbers calls for their ids.
var callSeq atomic.Uint64

// callTool serves one tools/call: rate limit, permission, arguments, then
// the tool under the failure policy, with its call context bound to the
// MCP client. It always answers with a result (refusals and failures are
// error results), and records the call for the audit hook once it ended.
// A session on a protocol revision with multi round-trip requests
// (2026-07-28) gets its questions as input-required results (mrtr.go).
func (s *Server) callTool(ctx context.Context, req *gomcp.CallToolRequest, name string) *gomcp.CallToolResult {
	if req.Params.RequestState != "" {
		return s.resumeMRTR(ctx, req)
	}
	if req.Session != nil && usesMRTR(req.Session) {
		return s.startMRTR(ctx, req, name)
	}
	return s.serveAudited(ctx, req, name, callLink(ctx, req.Session))
}

// serveAudited serves the call and records it.
func (s *Server) serveAudited(ctx context.Context, req *gomcp.CallToolRequest, name string, link *clientLink) *gomcp.CallToolResult {
	start := time.Now()
	client := clientID(ctx, req)
	rec := AuditRecord{Time: start, Client: client, Session: sessionID(req), Tool: name}
	res, outcome := s.serveCall(ctx, req, name, client, link, &rec)
	rec.Outcome, rec.Duration = outcome, time.Since(start)
	rec.IsError = res.IsError
	s.cfg.Audit(context.WithoutCancel(ctx), rec)
	return res
}

// serveCall does the work of callTool and names its outcome.
func (s *Server) serveCall(ctx context.Context, req *gomcp.CallToolRequest, name, client string, link *clientLink, rec *AuditRecord) (*gomcp.CallToolResult, string) {
	tool, ok := s.tools.lookup(name)
	if !ok {
		return errorResult(fmt.Sprintf("unknown tool %q", name)), outcomeUnknownTool
	}
	spec := tool.Spec()
	rec.Source = spec.Source.String()
	if !s.limits.allow(client) {
		return errorResult("rate limit exceeded for this client: retry later"), outcomeRateLimited
	}
	args, err := normaliseArgs(req.Params.Arguments)
	if err != nil {
		return errorResult(err.Error()), outcomeInvalidArgs
	}
	switch s.cfg.Permissions.Decide(spec, nil) {
	case agent.Deny:
		return errorResult(fmt.Sprintf("permission denied: the tool %s may not be called here", name)), outcomeDenied
	case agent.Ask:
		if ok, why := s.askPermission(ctx, link, spec, args); !ok {
			return errorResult(fmt.Sprintf("permission denied: %s", why)), outcomeDenied
		}
	}
	if spec.Source.Kind != failure.SourceMCP && len(spec.InputSchema) > 0 {
		// MCP servers validate their own arguments; other tools are
		// validated here, as an agent does.
		if err := s.tools.schemas.Validate(spec.InputSchema, args); err != nil && !errors.Is(err, schema.ErrBadSchema) {
			return errorResult(fmt.Sprintf("invalid arguments for %s: %v", name, err)), outcomeInvalidArgs
		}
	}
	if s.cfg.Logger != nil {
		ctx = s.log.WithContext(ctx) // a policy without a Logger logs here
	}
	gc := agent.GuardCheck{Tool: name, Source: spec.Source}
	args, infos, err := s.guards.Call(ctx, gc, args)
	s.logGuards(infos)
	if err != nil {
		return s.guardFailed(ctx, name, err), outcomeGuarded
	}
	result, raw, err := s.runTool(ctx, req, link, tool, spec, args)
	if err == nil && s.guards != nil { // (nil: no guards to read the result)
		checked := result
		if raw != nil {
			checked = guardView(raw) // a downstream server's own result: its text is checked
		}
		var out *agent.Result
		out, infos, err = s.guards.Result(ctx, gc, checked)
		s.logGuards(infos)
		if err != nil {
			return s.guardFailed(ctx, name, err), outcomeGuarded
		}
		if out != checked { // rewritten: the guard's result replaces the raw one
			result, raw = out, nil
		}
	}
	if err != nil {
		fe := failure.From(err)
		if fe.Tool == "" {
			fe.Tool = name
		}
		failure.Or(s.policy).Handle(ctx, fe)
		return errorResult(fe.ModelText()), outcomeFailed
	}
	out := raw
	if out == nil {
		out = toMCPResult(result)
	}
	if out.IsError {
		return out, outcomeToolError
	}
	return out, outcomeOK
}

// guardView is the text of a downstream server's result as result parts,
// for the result guards to read.
func guardView(raw *gomcp.CallToolResult) *agent.Result {
	r := &agent.Result{IsError: raw.IsError}
	for _, c := range raw.Content {
		switch c := c.(type) {
		case *gomcp.TextContent:
			r.Parts = append(r.Parts, agent.Part{Type: agent.PartText, Text: c.Text})
		case *gomcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				r.Parts = append(r.Parts, agent.Part{Type: agent.PartResource, URI: c.Resource.URI, MIMEType: c.Resource.MIMEType, Text: c.Resource.Text})
			}
		}
	}
	if raw.StructuredContent != nil {
		if b, err := json.Marshal(raw.StructuredContent); err == nil {
			r.Parts = append(r.Parts, agent.Part{Type: agent.PartJSON, JSON: b})
		}
	}
	return r
}

// runTool runs the tool under the failure policy (one circuit per source,
// keyed as an agent keys it) and its timeout, with its call context bound
// to the session. A panic is recovered; a tool that ignores its cancelled
// context is abandoned stopGrace after its deadline. A tool of
// Config.Servers is called as its server defines it, and its result (raw)
// is the server's own.
func (s *Server) runTool(ctx context.Context, req *gomcp.CallToolRequest, link *clientLink, tool agent.Tool, spec agent.ToolSpec, args json.RawMessage) (*agent.Result, *gomcp.CallToolResult, error) {
	timeout := s.cfg.CallTimeout
	if spec.Timeout > 0 {
		timeout = spec.Timeout
	}
	ctx, cancel := context.WithTimeout(withLink(ctx, link), timeout)
	defer cancel()
	// The call's run id finds its session for the questions and sampling
	// requests of sources that lose the context on the way (an MCP
	// server's requests arrive on the manager's own goroutines).
	id := fmt.Sprintf("mcp_%d", callSeq.Add(1))
	if link != nil {
		s.inflight.Store(id, link)
		defer s.inflight.Delete(id)
	}
	prog := newProgress(req)
	ctx, done := agent.BindCall(ctx, agent.CallBinding{Run: id, ID: id, Tool: spec.Name, Source: spec.Source,
		Progress: func(p agent.Progress) { prog.report(ctx, p) },
		Forward:  func(ev agent.Event) bool { prog.event(ctx, ev); return true },
		Elicitor: s.Elicitor()})
	defer done()
	var result *agent.Result
	var raw *gomcp.CallToolResult
	op := func(ctx context.Context) error {
		r, err := guarded(ctx, tool, args)
		result = r
		return err
	}
	if pt, ok := tool.(mcp.PassthroughTool); ok && s.cfg.Servers != nil {
		var meta gomcp.Meta
		if req.Params != nil {
			meta = req.Params.Meta
		}
		op = func(ctx context.Context) error {
			r, err := guardedRaw(ctx, pt, args, meta)
			raw = r
			return err
		}
	}
	err := failure.Or(s.policy).Execute(ctx, sourceKey(spec), op)
	if err != nil && ctx.Err() != nil {
		err = deadlineErr(ctx, spec, err)
	}
	if err == nil && raw == nil && result == nil {
		result = &agent.Result{}
	}
	return result, raw, err
}

// guardedRaw is guarded for a tool called as its server defines it.
func guardedRaw(ctx context.Context, tool mcp.PassthroughTool, args json.RawMessage, meta gomcp.Meta) (*gomcp.CallToolResult, error) {
	var raw *gomcp.CallToolResult
	_, err := guarded(ctx, rawCall{tool, func(ctx context.Context) error {
		r, err := tool.CallMCP(ctx, args, meta)
		raw = r
		return err
	}}, args)
	if err == nil && raw == nil {
		raw = &gomcp.CallToolResult{Content: []gomcp.Content{}}
	}
	return raw, err
}

// rawCall is a passthrough tool whose Call runs do (guarded's goroutine
// and grace for the raw call).
type rawCall struct {
	mcp.PassthroughTool
	do func(ctx context.Context) error
}

func (r rawCall) Call(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
	return nil, r.do(ctx)
}

// guardFailed answers a call a guard blocked: the failure goes through
// the policy, the client gets its model-safe wording.
func (s *Server) guardFailed(ctx context.Context, name string, err error) *gomcp.CallToolResult {
	fe := failure.From(err)
	if fe.Tool == "" {
		fe.Tool = name
	}
	failure.Or(s.policy).Handle(ctx, fe)
	return errorResult(fe.ModelText())
}

// logGuards logs the guards' verdicts.
func (s *Server) logGuards(infos []agent.GuardInfo) {
	for _, gi := range infos {
		s.log.Info().Str("guard", gi.Guard).Str("point", gi.Point).Str("action", gi.Action).Str("tool", gi.Tool).
			Bool("detect_only", gi.DetectOnly).Str("reason", gi.Reason).Msg("guard")
	}
}

// guarded runs tool.Call on a goroutine of its own, recovering a panic, and
// returns when it returned or stopGrace after ctx ended.
func guarded(ctx context.Context, tool agent.Tool, args json.RawMessage) (*agent.Result, error) {
	type out struct {
		r   *agent.Result
		err error
	}
	ch := make(chan out, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- out{err: &failure.Error{Kind: failure.Panic, Source: failureSource(tool.Spec().Source.Kind),
					Tool: tool.Spec().Name, Op: "call", Message: "the tool panicked",
					Err: fmt.Errorf("panic: %v\n%s", p, debug.Stack())}}
			}
		}()
		r, err := tool.Call(ctx, args)
		ch <- out{r, err}
	}()
	select {
	case o := <-ch:
		return o.r, o.err
	case <-ctx.Done():
	}
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case o := <-ch:
		return o.r, o.err
	case <-t.C:
		return nil, failure.Wrap(failure.Timeout, failureSource(tool.Spec().Source.Kind),
			fmt.Errorf("the tool %s did not return after its cancellation: %w", tool.Spec().Name, ctx.Err()))
	}
}

// normaliseArgs returns the call's arguments as a JSON object: absent and
// null become {}, anything else that is not an object is refused.
func normaliseArgs(raw json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	if trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, errors.New("invalid arguments: they must be a JSON object")
	}
	return trimmed, nil
}

// sourceKey is the circuit-breaker key of a tool, as an agent keys it.
func sourceKey(spec agent.ToolSpec) failure.Key { return spec.Source.BreakerKey(spec.Name) }

// failureSource is the failure source of a provenance kind (an empty kind
// is a Go tool's).
func failureSource(kind failure.Source) failure.Source {
	if kind == "" {
		return failure.SourceTool
	}
	return kind
}

// errorResult is an error result of one text part.
func errorResult(text string) *gomcp.CallToolResult {
	return &gomcp.CallToolResult{IsError: true, Content: []gomcp.Content{&gomcp.TextContent{Text: text}}}
}

// askPermission puts an "ask" decision to the client as a form
// elicitation; it reports whether the person accepted, and why not.
func (s *Server) askPermission(ctx context.Context, link *clientLink, spec agent.ToolSpec, args json.RawMessage) (bool, string) {
	if !link.canElicit() {
		return false, fmt.Sprintf("the tool %s needs a person's approval, and this client cannot be asked (no elicitation capability)", spec.Name)
	}
	shown := string(args)
	if len(shown) > 2000 {
		shown = shown[:2000] + "…"
	}
	ectx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	res, err := link.elicit(ectx, &gomcp.ElicitParams{Mode: "form",
		Message:         fmt.Sprintf("Allow the tool %s to run with the arguments %s?", spec.Name, strings.TrimSpace(shown)),
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`)})
	if err != nil {
		return false, fmt.Sprintf("asking for approval of %s failed", spec.Name)
	}
	if res.Action != string(agent.ElicitAccept) {
		return false, fmt.Sprintf("the person answered %q to running %s", res.Action, spec.Name)
	}
	return true, ""
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
