package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/redact"
	"github.com/switchboard-dev/switchboard/internal/schema"
	"github.com/switchboard-dev/switchboard/mcp/internal/taskwire"
)

// Toolset returns the agent.Toolset of every server's tools (named
// mcp__<server>__<tool>) plus, unless disabled, the cross-server tools
// mcp_list_resources, mcp_read_resource, mcp_get_prompt and
// mcp_read_result. It has the optional Changed and ServerInstructions
// methods (see agent.Toolset).
func (m *Manager) Toolset() agent.Toolset { return (*toolset)(m) }

type toolset Manager

// Name is "mcp".
func (t *toolset) Name() string { return "mcp" }

// Changed is signalled after any server's tool list changed.
func (t *toolset) Changed() <-chan struct{} { return t.changed }

// ServerInstructions are the instructions of the servers that gave some,
// by server name ([Manager.ServerInstructions]).
func (t *toolset) ServerInstructions() map[string]string {
	m := (*Manager)(t)
	out := map[string]string{}
	for _, s := range m.servers {
		s.mu.Lock()
		if s.instructions != "" {
			out[s.cfg.Name] = s.instructions
		}
		s.mu.Unlock()
	}
	return out
}

// Tools returns the current tools: each server's last good listing.
func (t *toolset) Tools(context.Context) ([]agent.Tool, error) {
	m := (*Manager)(t)
	m.tsMu.Lock()
	defer m.tsMu.Unlock()
	if m.tools != nil && m.tsBuilt == m.tsGen {
		return m.tools, nil
	}
	m.tools = m.buildTools()
	m.tsBuilt = m.tsGen
	return m.tools, nil
}

func (m *Manager) buildTools() []agent.Tool {
	var nm namer
	out := []agent.Tool{}
	anyRes, anyPrompts := false, false
	for _, s := range m.servers {
		s.mu.Lock()
		tools, hasRes, hasPrompts := s.tools, s.hasRes, s.hasPrompts
		s.mu.Unlock()
		anyRes = anyRes || hasRes
		anyPrompts = anyPrompts || hasPrompts
		for _, t := range tools {
			out = append(out, newTool(s, nm.name(s.cfg.Name, t.Name), t))
		}
	}
	out = append(out, m.builtinTools(anyRes, anyPrompts)...)
	return out
}

// tool is one MCP tool as the agent sees it.
type tool struct {
	s      *server
	spec   agent.ToolSpec
	orig   string
	output []byte
	def    *gomcp.Tool // as the server listed it
}

func newTool(s *server, name string, t *gomcp.Tool) *tool {
	in, _ := json.Marshal(t.InputSchema)
	if len(in) == 0 || bytes.Equal(in, []byte("null")) {
		in = nil
	}
	desc := t.Description
	if desc == "" && t.Title != "" {
		desc = t.Title
	}
	// MCP servers must validate tool inputs (specification, "Tools",
	// security considerations); the agent need not do it a second time.
	// The server's Timeout bounds the call; an agent prefers the spec's
	// Timeout to its own ToolTimeout.
	spec := agent.ToolSpec{Name: name, Title: t.Title, Description: desc, InputSchema: in,
		Timeout: s.cfg.Timeout, Source: agent.Provenance{Kind: failure.SourceMCP, Name: s.cfg.Name, Tool: t.Name}}
	if a := t.Annotations; a != nil {
		spec.ReadOnly = a.ReadOnlyHint
		spec.Idempotent = a.IdempotentHint && !a.ReadOnlyHint
		// Per the spec destructiveHint defaults to true, but only for tools
		// that are not read-only.
		spec.Destructive = !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint)
		if spec.Title == "" {
			spec.Title = a.Title // MCP's display name: title, else annotations.title
		}
		if spec.Description == "" {
			spec.Description = a.Title
		}
	}
	var out []byte
	if t.OutputSchema != nil {
		out, _ = json.Marshal(t.OutputSchema)
		spec.OutputSchema = out
	}
	return &tool{s: s, spec: spec, orig: t.Name, output: out, def: t}
}

// Spec describes the tool.
func (t *tool) Spec() agent.ToolSpec { return t.spec }

// Call calls the tool at its server. It returns once ctx is done (go-sdk
// ends the request and the server is sent notifications/cancelled); the
// agent bounds it with a guard goroutine all the same.
func (t *tool) Call(ctx context.Context, args json.RawMessage) (*agent.Result, error) {
	return t.s.callTool(ctx, t.spec.Name, t.orig, t.output, args)
}

// CallTool calls a server's tool by its original name through the failure
// policy (retries of transient failures, circuit breaker). Progress goes to
// agent.CallFromContext(ctx) when there is one.
func (m *Manager) CallTool(ctx context.Context, serverName, toolName string, args json.RawMessage) (*agent.Result, error) {
	s, err := m.server(serverName)
	if err != nil {
		return nil, err
	}
	var output []byte
	s.mu.Lock()
	for _, t := range s.tools {
		if t.Name == toolName && t.OutputSchema != nil {
			output, _ = json.Marshal(t.OutputSchema)
		}
	}
	s.mu.Unlock()
	var res *agent.Result
	err = m.pol().Execute(ctx, s.key, func(ctx context.Context) error {
		var err error
		res, err = s.callTool(ctx, modelToolName(serverName, toolName), toolName, output, args)
		return err
	})
	return res, err
}

// callContext is a call's context: bounded by the server's call timeout,
// and by its idle timeout, which touch (nil without one) restarts on
// progress. stop releases both.
func (s *server) callContext(ctx context.Context, modelName string) (cctx context.Context, cancel context.CancelCauseFunc, touch, stop func()) {
	callTimeout, idle := s.callTimeouts()
	words := s.timeoutWords()
	cctx, cancel = context.WithCancelCause(ctx)
	stops := []func(){func() { cancel(nil) }}
	if callTimeout > 0 {
		var stopT context.CancelFunc
		cctx, stopT = context.WithTimeoutCause(cctx, callTimeout, &failure.Error{Kind: failure.Timeout, Source: failure.SourceMCP,
			Name: s.cfg.Name, Tool: modelName, Message: words[0]})
		stops = append(stops, stopT)
	}
	if idle > 0 {
		idleErr := &failure.Error{Kind: failure.Timeout, Source: failure.SourceMCP, Name: s.cfg.Name, Tool: modelName,
			Message: words[1]}
		idleTimer := time.AfterFunc(idle, func() { cancel(idleErr) })
		touch = func() { idleTimer.Reset(idle) }
		stops = append(stops, func() { idleTimer.Stop() })
	}
	return cctx, cancel, touch, func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
}

// timeoutWords are the messages of a call's timeout and idle timeout,
// worded once per server (its timeouts do not change).
func (s *server) timeoutWords() *[2]string {
	s.wordsOnce.Do(func() {
		call, idle := s.callTimeouts()
		s.words = [2]string{fmt.Sprintf("the call did not finish within %s and was cancelled", call),
			fmt.Sprintf("the call reported no progress for %s and was cancelled", idle)}
	})
	return &s.words
}

func (s *server) callTimeouts() (call, idle time.Duration) {
	call, idle = s.cfg.Timeout, s.m.cfg.IdleTimeout
	if s.cfg.IdleTimeout > 0 {
		idle = s.cfg.IdleTimeout
	}
	return call, idle
}

// idempotencyMetaKey is the _meta key of a tools/call request that carries
// the call's idempotency key (agent.Call.IdempotencyKey).
const idempotencyMetaKey = "dev.switchboard/idempotency-key"

// callTool is the hot path of a tool call.
func (s *server) callTool(ctx context.Context, modelName, orig string, output []byte, args json.RawMessage) (*agent.Result, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = json.RawMessage("{}")
	} else if args[0] != '{' {
		return nil, &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceMCP, Name: s.cfg.Name, Tool: modelName,
			Message: "the arguments must be a JSON object"}
	}
	res, err := s.call(ctx, modelName, &gomcp.CallToolParams{Name: orig, Arguments: args})
	if err != nil {
		return nil, err
	}
	return s.convertResult(ctx, modelName, output, res)
}

// call sends one tools/call on the server's session: its progress reaches
// the agent call of ctx, its idempotency key and trace context go in
// _meta, and a request an expired HTTP session never saw is sent once
// more on a new session.
func (s *server) call(ctx context.Context, modelName string, params *gomcp.CallToolParams) (*gomcp.CallToolResult, error) {
	sess, err := s.session(ctx, 0)
	if err != nil {
		return nil, s.callErr(ctx, nil, nil, modelName, err)
	}
	cctx, cancel, touch, stop := s.callContext(ctx, modelName)
	defer stop()
	call, _ := agent.CallFromContext(ctx)
	token := "sb-" + strconv.FormatUint(s.m.tokens.Add(1), 36)
	fl := &inflight{call: call, cancel: cancel, server: s.cfg.Name}
	if call != nil || touch != nil {
		fl.progress = func(p agent.Progress) {
			if touch != nil {
				touch()
			}
			call.ReportProgress(p)
		}
	}
	s.addInflight(token, fl)
	params.SetProgressToken(token)
	if key := call.IdempotencyKey(); key != "" {
		if params.Meta == nil {
			params.Meta = gomcp.Meta{}
		}
		params.Meta[idempotencyMetaKey] = key
	}
	if h := s.resumedTask(call, params.Name); h != nil {
		// The resumed run's call had a task: follow it (polled at once),
		// not call again.
		now := int64(0)
		res, sess2, err := s.followTask(cctx, sess, call, modelName, *h,
			&taskwire.Task{TaskID: h.Task, Status: taskwire.Working, PollIntervalMs: &now}, touch)
		s.removeInflight(token)
		fl.finish()
		if err != nil {
			return nil, s.callErr(cctx, sess2, err, modelName, context.Cause(cctx))
		}
		return res, nil
	}
	// The W3C trace context of cctx goes in _meta (traceSending).
	res, err := sess.CallTool(cctx, params)
	if err != nil && sessionMissing(err) && cctx.Err() == nil {
		// The HTTP session expired or the server restarted: the request was
		// not processed, so re-establish the session and send it once more.
		s.log.Info().Err(err).Msg("HTTP session missing; re-establishing it")
		s.removeInflight(token) // closing the session cancels the calls in flight
		_ = sess.Close()
		if sess2, err2 := s.sessionAfter(cctx, sess); err2 == nil {
			s.addInflight(token, fl)
			sess = sess2
			res, err = sess2.CallTool(cctx, params)
		}
	}
	answered := err == nil // the tools/call's own answer reached the call
	if err == nil {
		var t *taskwire.Task
		if t, err = taskOf(res); err != nil {
			err = &failure.Error{Kind: failure.Protocol, Source: failure.SourceMCP, Name: s.cfg.Name, Tool: modelName, Op: "task",
				Message: "the server answered with an invalid task", Err: err}
		} else if t != nil {
			res, sess, err = s.followTask(cctx, sess, call, modelName, taskHandle{Server: s.cfg.Name, Tool: params.Name, Task: t.TaskID}, t, touch)
		}
	}
	if call != nil {
		s.drainNotes() // the progress read before the result reaches the call
	}
	if task := s.removeInflight(token); task != "" && !answered {
		// The call gave up while its task's handle was on the way.
		s.cancelOrphan(sess, task)
	}
	fl.finish()
	if err != nil {
		return nil, s.callErr(cctx, sess, err, modelName, context.Cause(cctx))
	}
	return res, nil
}

// drainNotes waits, at most noteFlushWait, for the notifications read so
// far to be handled.
func (s *server) drainNotes() {
	s.mu.Lock()
	q := s.noteQ
	s.mu.Unlock()
	if q != nil {
		q.flush(noteFlushWait)
	}
}

// convertResult is a call's result as an agent.Result: its structured
// content checked against the tool's output schema, and saved to files
// when it is over SaveResultsOver (but for the media parts the call's model
// takes: fitResult).
func (s *server) convertResult(ctx context.Context, modelName string, output []byte, res *gomcp.CallToolResult) (*agent.Result, error) {
	out := &agent.Result{Parts: convertContent(res.Content), IsError: res.IsError}
	if res.StructuredContent != nil {
		sc, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceMCP, Name: s.cfg.Name, Tool: modelName,
				Message: "the tool's structured content is not valid JSON", Err: err}
		}
		if len(output) > 0 && !res.IsError {
			if verr := s.m.schemas.Validate(output, sc); verr != nil && !errors.Is(verr, schema.ErrBadSchema) {
				return nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceMCP, Name: s.cfg.Name, Tool: modelName,
					Message: "the tool's structured result does not match its declared output schema: " + verr.Error()}
			}
		}
		out.Parts = append(out.Parts, agent.Part{Type: agent.PartJSON, JSON: sc})
	} else if len(output) > 0 && !res.IsError {
		return nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceMCP, Name: s.cfg.Name, Tool: modelName,
			Message: "the tool declares an output schema but returned no structured content"}
	}
	return s.m.fitResult(ctx, modelName, out)
}

// callErr classifies a failed call. cause is the call context's cause (a
// timeout, idle timeout or lost connection) when the context ended.
func (s *server) callErr(ctx context.Context, sess *gomcp.ClientSession, err error, tool string, cause error) error {
	var fe *failure.Error
	if cause != nil && ctx.Err() != nil && errors.As(cause, &fe) {
		c := *fe
		c.Tool, c.Op = tool, "call"
		if c.Err == nil {
			c.Err = err
		}
		return &c
	}
	if err == nil {
		err = cause
	}
	if errors.As(err, &fe) {
		c := *fe
		c.Tool = tool
		if c.Name == "" {
			c.Name = s.cfg.Name
		}
		if c.Source == failure.SourceMCP && (c.Op == "read" || c.Op == "write") {
			// The connection broke (the server wrote garbage or stopped
			// reading): callers wait for the restarted server.
			s.dropSession(sess)
		}
		return &c
	}
	out := &failure.Error{Source: failure.SourceMCP, Name: s.cfg.Name, Tool: tool, Op: "call", Err: err}
	var we *jsonrpc.Error
	switch {
	case errors.As(err, &we):
		out.Message = redact.Redact(we.Message)
		switch we.Code {
		case jsonrpc.CodeInvalidParams:
			out.Kind = failure.InvalidArgs
		case jsonrpc.CodeMethodNotFound:
			out.Kind = failure.UnknownTool
		case codeRejected:
			// go-sdk's transport did not deliver the request: the server
			// answered 429 or 5xx, or the HTTP request failed.
			out.Kind, out.Retryable = failure.Transient, true
			out.Message = "the server could not take the request now (it answered that it is busy or unavailable)"
		default:
			out.Kind = failure.ToolError
		}
	case sessionMissing(err):
		// The HTTP session is gone (the server restarted or expired it) and
		// could not be re-established for this call. Not retried: go-sdk
		// fails every call in flight on the session with this error, and
		// those may have run.
		s.dropSession(sess)
		out.Kind = failure.Unavailable
		out.Message = "the server no longer knows this client's session (it restarted or expired it); it is being re-established"
	case errors.Is(err, gomcp.ErrConnectionClosed), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, io.ErrClosedPipe):
		s.dropSession(sess)
		out.Kind = failure.Unavailable
		out.Message = "the connection to the server was lost during the call (it may have crashed); it is being restarted"
	default:
		out.Kind = failure.From(err).Kind
		out.Retryable = out.Kind.Retryable()
	}
	return out
}

// codeRejected is the code of go-sdk's jsonrpc2.ErrRejected ("rejected by
// transport"), which its Streamable HTTP client returns, connection intact,
// when the server answers 429, 500, 502, 503 or 504 or the HTTP request
// fails (go-sdk v1.8.0 mcp/streamable.go, checkResponse and Write).
const codeRejected = -32005

// sessionMissing reports whether err says the HTTP session is gone (the
// server answered 404 to the request, so it was not processed). go-sdk
// wraps ErrSessionMissing with %v under ErrConnectionClosed, so the text
// is checked too.
func sessionMissing(err error) bool {
	return errors.Is(err, gomcp.ErrSessionMissing) || strings.Contains(err.Error(), gomcp.ErrSessionMissing.Error())
}
