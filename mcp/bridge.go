package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// inflight is a tool call waiting for its result: progress notifications
// carrying its token reach it, and server requests made while it is the
// server's only call are attributed to its run.
type inflight struct {
	call     *agent.Call
	progress func(agent.Progress)
	cancel   context.CancelCauseFunc
	server   string
	// task is the task its tools/call was answered with, seen on the
	// connection (guarded by the server's mu): a call that gave up before
	// the answer reached it cancels it (task.go).
	task string

	mu   sync.Mutex
	done bool // set when the call returned: no progress after that
}

// report delivers a progress notification unless the call has returned
// (the agent's progress function must not be called after Call returns).
func (c *inflight) report(p agent.Progress) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done && c.progress != nil {
		c.progress(p)
	}
}

// finish stops progress delivery.
func (c *inflight) finish() {
	c.mu.Lock()
	c.done = true
	c.mu.Unlock()
}

// lost cancels the call because the connection went away.
func (c *inflight) lost() {
	if c.cancel != nil {
		c.cancel(&failure.Error{Kind: failure.Unavailable, Source: failure.SourceMCP, Name: c.server, Op: "call",
			Message: "the connection to the server was lost during the call (it may have crashed); it is being restarted"})
	}
}

func (s *server) addInflight(token string, c *inflight) {
	s.mu.Lock()
	s.inflight[token] = c
	s.mu.Unlock()
}

// removeInflight forgets the call of token and returns the task its
// tools/call was answered with, if the connection saw one.
func (s *server) removeInflight(token string) (task string) {
	s.mu.Lock()
	if c, ok := s.inflight[token]; ok {
		task = c.task
	}
	delete(s.inflight, token)
	s.mu.Unlock()
	return task
}

// callOf returns the agent tool call a server request (sampling,
// elicitation) belongs to. Under protocol 2026-07-28 the request is an
// input request of the call's own result, fulfilled with the call's
// context; an older server sends it on its own, and only a server with a
// single call in flight can be matched.
func (s *server) callOf(ctx context.Context) *agent.Call {
	if c, ok := agent.CallFromContext(ctx); ok {
		return c
	}
	return s.soleCall()
}

// soleCall returns the server's only call in flight, if there is exactly one.
func (s *server) soleCall() *agent.Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.inflight) != 1 {
		return nil
	}
	for _, c := range s.inflight {
		return c.call
	}
	return nil
}

func (s *server) onProgress(_ context.Context, req *gomcp.ProgressNotificationClientRequest) {
	p := req.Params
	if p == nil {
		return
	}
	tok := fmt.Sprint(p.ProgressToken)
	s.mu.Lock()
	c := s.inflight[tok]
	s.mu.Unlock()
	if c == nil {
		return
	}
	c.report(agent.Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
}

// onNote handles a log or progress notification taken off the
// connection by its noteQueue, as go-sdk would have: parameters that do
// not decode are dropped.
func (s *server) onNote(method string, params json.RawMessage) {
	switch method {
	case methodLog:
		var p gomcp.LoggingMessageParams
		if json.Unmarshal(params, &p) == nil {
			s.onLog(s.m.ctx, &gomcp.LoggingMessageRequest{Params: &p})
		}
	case methodProgress:
		var p gomcp.ProgressNotificationParams
		if json.Unmarshal(params, &p) == nil {
			s.onProgress(s.m.ctx, &gomcp.ProgressNotificationClientRequest{Params: &p})
		}
	}
}

func (s *server) onLog(ctx context.Context, req *gomcp.LoggingMessageRequest) {
	p := req.Params
	if p == nil {
		return
	}
	var ev *zerolog.Event
	switch p.Level {
	case "debug":
		ev = s.log.Debug()
	case "info", "notice":
		ev = s.log.Info()
	case "warning":
		ev = s.log.Warn()
	default:
		ev = s.log.Error()
	}
	data, _ := json.Marshal(p.Data)
	ev.Str("stream", "mcp-log").Str("level_mcp", string(p.Level)).Str("logger", p.Logger).RawJSON("data", jsonOr(data)).Msg("server log message")
	if f := s.m.cfg.OnLog; f != nil {
		msg := LogMessage{Server: s.cfg.Name, Level: string(p.Level), Logger: p.Logger, Data: p.Data}
		if c := s.callOf(ctx); c != nil {
			msg.Run = c.Run
		}
		f(ctx, msg)
	}
}

func jsonOr(b []byte) []byte {
	if len(b) == 0 || !json.Valid(b) {
		return []byte("null")
	}
	return b
}

// onSample bridges sampling/createMessage (and its 2026-07-28
// multi-round-trip form, which go-sdk feeds to the same handler) to the
// configured Sampler.
func (s *server) onSample(ctx context.Context, req *gomcp.CreateMessageRequest) (*gomcp.CreateMessageResult, error) {
	p := req.Params
	if p == nil {
		return nil, fmt.Errorf("sampling request without parameters")
	}
	sr := agent.SamplingRequest{Source: agent.Provenance{Kind: failure.SourceMCP, Name: s.cfg.Name}, System: p.SystemPrompt,
		MaxTokens: int(p.MaxTokens), StopSequences: p.StopSequences}
	if c := s.callOf(ctx); c != nil {
		sr.Run = c.Run
	}
	if sr.MaxTokens <= 0 || sr.MaxTokens > s.m.cfg.MaxSamplingTokens {
		sr.MaxTokens = s.m.cfg.MaxSamplingTokens
	}
	if p.Temperature != 0 {
		t := p.Temperature
		sr.Temperature = &t
	}
	if mp := p.ModelPreferences; mp != nil {
		sr.Preferences = agent.ModelPreferences{CostPriority: mp.CostPriority, SpeedPriority: mp.SpeedPriority, IntelligencePriority: mp.IntelligencePriority}
		for _, h := range mp.Hints {
			if h != nil && h.Name != "" {
				sr.Preferences.Hints = append(sr.Preferences.Hints, h.Name)
			}
		}
	}
	for _, m := range p.Messages {
		if m == nil {
			continue
		}
		role := llm.RoleUser
		if m.Role == "assistant" {
			role = llm.RoleAssistant
		}
		text := ""
		switch c := m.Content.(type) {
		case *gomcp.TextContent:
			text = c.Text
		case *gomcp.ImageContent:
			text = fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data))
		case *gomcp.AudioContent:
			text = fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data))
		default:
			b, _ := json.Marshal(c)
			text = string(b)
		}
		sr.Messages = append(sr.Messages, llm.Message{Role: role, Text: text})
	}
	res, err := s.m.cfg.Sampler.Sample(ctx, sr)
	if err != nil {
		fe := failure.Wrap(failure.From(err).Kind, failure.SourceMCP, err)
		if fe.Name == "" {
			fe.Name = s.cfg.Name
		}
		fe.Op = "sample"
		s.m.handle(ctx, fe)
		return nil, fmt.Errorf("sampling failed: %s", fe.ModelText())
	}
	stop := mcpStopReason(res.StopReason)
	return &gomcp.CreateMessageResult{Content: &gomcp.TextContent{Text: res.Text}, Model: res.Model, Role: "assistant", StopReason: stop}, nil
}

// elicitUnchecked serves form elicitations without go-sdk's client-side
// check of the requested schema, which refuses valid schemas of SEP-1330
// (a multi-select of titled values: array items with anyOf): the
// Elicitor, and for a gateway the client behind it, judges the schema.
func (s *server) elicitUnchecked(next gomcp.MethodHandler) gomcp.MethodHandler {
	return func(ctx context.Context, method string, req gomcp.Request) (gomcp.Result, error) {
		if method == "elicitation/create" && s.m.cfg.Elicitor != nil {
			if er, ok := req.(*gomcp.ElicitRequest); ok && er.Params != nil && er.Params.URL == "" &&
				(er.Params.Mode == "" || er.Params.Mode == "form") {
				res, err := s.onElicit(ctx, er)
				if err != nil {
					return nil, err
				}
				if err := applyElicitDefaults(er.Params.RequestedSchema, res); err != nil {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
				}
				return res, nil
			}
		}
		return next(ctx, method, req)
	}
}

// applyElicitDefaults fills an accepted form's missing fields from the
// requested schema's defaults (SEP-1034), as go-sdk's client does after
// its own handler.
func applyElicitDefaults(requested any, res *gomcp.ElicitResult) error {
	if requested == nil || res == nil || res.Action != string(agent.ElicitAccept) || res.Content == nil {
		return nil
	}
	raw, err := json.Marshal(requested)
	if err != nil {
		return fmt.Errorf("elicitation: requested schema: %w", err)
	}
	var sch jsonschema.Schema
	if err := json.Unmarshal(raw, &sch); err != nil {
		return fmt.Errorf("elicitation: requested schema: %w", err)
	}
	resolved, err := sch.Resolve(nil)
	if err != nil {
		return fmt.Errorf("elicitation: requested schema cannot be resolved: %w", err)
	}
	if err := resolved.ApplyDefaults(&res.Content); err != nil {
		return fmt.Errorf("elicitation: schema defaults cannot be applied: %w", err)
	}
	return nil
}

// onElicit bridges elicitation/create (form and URL modes) to the
// configured Elicitor.
func (s *server) onElicit(ctx context.Context, req *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
	p := req.Params
	if p == nil {
		return nil, fmt.Errorf("elicitation request without parameters")
	}
	e := agent.Elicitation{Kind: agent.ElicitForm, Source: agent.Provenance{Kind: failure.SourceMCP, Name: s.cfg.Name},
		Message: p.Message, URL: p.URL, ID: p.ElicitationID}
	if p.Mode == "url" || p.Mode == "" && p.URL != "" {
		e.Kind = agent.ElicitURL
	}
	if p.RequestedSchema != nil {
		b, err := json.Marshal(p.RequestedSchema)
		if err == nil {
			e.Schema = b
		}
	}
	if c := s.callOf(ctx); c != nil {
		e.Run, e.Call = c.Run, c.ID
		e.Source.Tool = c.Source.Tool
	}
	if e.Kind == agent.ElicitURL && e.ID != "" {
		s.rememberURL(e)
	}
	res, err := s.m.cfg.Elicitor.Elicit(ctx, e)
	if err != nil {
		fe := failure.Wrap(failure.From(err).Kind, failure.SourceMCP, err)
		if fe.Name == "" {
			fe.Name = s.cfg.Name
		}
		fe.Op = "elicit"
		s.m.handle(ctx, fe)
		return &gomcp.ElicitResult{Action: string(agent.ElicitCancel)}, nil
	}
	action := res.Action
	if action == "" {
		action = agent.ElicitDecline
	}
	out := &gomcp.ElicitResult{Action: string(action)}
	if action == agent.ElicitAccept && e.Kind == agent.ElicitForm {
		out.Content = res.Content
		if out.Content == nil {
			out.Content = map[string]any{}
		}
	}
	return out, nil
}

// mcpStopReason maps a provider's stop reason to MCP's spelling.
func mcpStopReason(r string) string {
	switch r {
	case "", "end_turn", "stop", "endTurn":
		return "endTurn"
	case "max_tokens", "length", "maxTokens":
		return "maxTokens"
	case "stop_sequence", "stopSequence":
		return "stopSequence"
	}
	return r
}

// maxURLElicits bounds the URL-mode elicitations remembered while their
// completion is awaited; past it the oldest are forgotten (their
// completion is still forwarded, without run and call).
const maxURLElicits = 256

// rememberURL records a forwarded URL-mode elicitation until its
// completion.
func (s *server) rememberURL(e agent.Elicitation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.urlElicits == nil {
		s.urlElicits = map[string]agent.Elicitation{}
	}
	if len(s.urlElicits) >= maxURLElicits {
		clear(s.urlElicits)
	}
	s.urlElicits[e.ID] = agent.Elicitation{Kind: agent.ElicitURL, ID: e.ID, Run: e.Run, Call: e.Call, Source: e.Source, URL: e.URL}
}

// onElicitComplete forwards notifications/elicitation/complete to the
// Elicitor, when it has the optional ElicitationComplete method of an
// agent.Elicitor, with the identity of the question it ends.
func (s *server) onElicitComplete(ctx context.Context, req *gomcp.ElicitationCompleteNotificationRequest) {
	c, ok := s.m.cfg.Elicitor.(interface {
		ElicitationComplete(context.Context, agent.Elicitation)
	})
	if !ok || req.Params == nil || req.Params.ElicitationID == "" {
		return
	}
	id := req.Params.ElicitationID
	s.mu.Lock()
	e, known := s.urlElicits[id]
	delete(s.urlElicits, id)
	s.mu.Unlock()
	if !known {
		e = agent.Elicitation{Kind: agent.ElicitURL, ID: id, Source: agent.Provenance{Kind: failure.SourceMCP, Name: s.cfg.Name}}
	}
	c.ElicitationComplete(ctx, e)
}
