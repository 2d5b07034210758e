package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/failure"
)

// scriptedName is the name every scripted model reports, so that logs,
// events and the demo's output say plainly that no real model is answering.
const scriptedName = "scripted (offline, deterministic; not a real model)"

// Step is one scripted model turn. Exactly one of its forms is used:
// Respond, if set, computes the turn from the request (to react to tool
// results and errors); otherwise Err, if set, is returned; otherwise the
// turn answers Text and asks for Calls.
type Step struct {
	Text    string
	Calls   []ToolCall
	Err     error
	Respond func(req *Request) Step
}

// Say is a step that answers text.
func Say(text string) Step { return Step{Text: text} }

// CallTool returns a tool call with JSON-encoded args (a string is sent as
// is, so malformed arguments can be scripted).
func CallTool(id, name string, args any) ToolCall {
	var raw json.RawMessage
	switch a := args.(type) {
	case nil:
	case string:
		raw = json.RawMessage(a)
	case json.RawMessage:
		raw = a
	default:
		b, err := json.Marshal(a)
		if err != nil {
			panic(fmt.Sprintf("llm.CallTool: args of %s do not encode: %v", name, err))
		}
		raw = b
	}
	return ToolCall{ID: id, Name: name, Args: raw}
}

// Calls is a step that asks for the given tool calls (in parallel).
func Calls(calls ...ToolCall) Step { return Step{Calls: calls} }

// React is a step computed from the request.
func React(f func(req *Request) Step) Step { return Step{Respond: f} }

// SummarizeResults is a step that answers with a deterministic summary of
// the last tool results it was given: how many succeeded and failed, and
// the first line of each.
func SummarizeResults(prefix string) Step {
	return React(func(req *Request) Step {
		results := lastToolResults(req)
		var b strings.Builder
		b.WriteString(prefix)
		ok, bad := 0, 0
		for _, r := range results {
			if r.IsError {
				bad++
			} else {
				ok++
			}
		}
		fmt.Fprintf(&b, " (%d tool results, %d errors)", ok+bad, bad)
		for _, r := range results {
			fmt.Fprintf(&b, "\n- %s: %s", r.Name, firstLine(stripEnvelope(r.Content)))
		}
		return Say(b.String())
	})
}

// lastToolResults returns the tool results of the request's last message,
// if it is a tool message.
func lastToolResults(req *Request) []ToolResult {
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == RoleTool {
		return req.Messages[n-1].ToolResults
	}
	return nil
}

func stripEnvelope(s string) string {
	if strings.HasPrefix(s, "<tool_result") {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
		s = strings.TrimSuffix(s, "\n</tool_result>")
	}
	return s
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// Scripted is a deterministic model that follows a script of turns: the
// offline default of the demo and the model of tests. It streams each text
// answer word by word through Request.OnText, reports input usage as one
// token per four bytes (rounded up, per message) and output usage as the
// number of words, and says it is scripted in its Name. A request marked
// Compaction is answered with a deterministic summary (the lines of the
// transcript that name requests and tools, within Request.MaxTokens)
// without using a step of the script.
//
// A Scripted model is safe for concurrent use; its position in the script is
// shared by all callers.
type Scripted struct {
	mu    sync.Mutex
	steps []Step
	pos   int
	cycle bool
	reqs  int
}

// NewScripted returns a model that plays steps in order; after the last
// step, Generate fails with a Model failure saying the script is exhausted.
func NewScripted(steps ...Step) *Scripted { return &Scripted{steps: steps} }

// NewCyclic returns a model that plays steps in order and starts over after
// the last one (for benchmarks and long-running demos).
func NewCyclic(steps ...Step) *Scripted { return &Scripted{steps: steps, cycle: true} }

// Name says that this is a scripted model.
func (s *Scripted) Name() string { return scriptedName }

// Requests returns how many turns were asked of the model.
func (s *Scripted) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs
}

// Generate plays the next step.
func (s *Scripted) Generate(ctx context.Context, req *Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req.Compaction {
		return scriptedSummary(req), nil
	}
	s.mu.Lock()
	s.reqs++
	if s.pos >= len(s.steps) {
		if !s.cycle || len(s.steps) == 0 {
			s.mu.Unlock()
			return nil, &failure.Error{Kind: failure.Model, Source: failure.SourceModel, Name: scriptedName,
				Message: fmt.Sprintf("the script is exhausted after %d turns", len(s.steps))}
		}
		s.pos = 0
	}
	step := s.steps[s.pos]
	s.pos++
	s.mu.Unlock()

	for step.Respond != nil {
		step = step.Respond(req)
	}
	if step.Err != nil {
		return nil, step.Err
	}
	words := 0
	if step.Text != "" {
		fields := strings.SplitAfter(step.Text, " ")
		words = len(fields)
		if req.OnText != nil {
			for _, w := range fields {
				req.OnText(w)
			}
		}
	}
	// Usage is approximated as a token per four bytes, without allocating.
	in := approxTokens(req.System)
	for _, m := range req.Messages {
		in += approxTokens(m.Text)
		for _, r := range m.ToolResults {
			in += approxTokens(r.Content)
		}
	}
	calls := make([]ToolCall, len(step.Calls))
	copy(calls, step.Calls)
	stop := "end_turn"
	if len(calls) > 0 {
		stop = "tool_use"
	}
	return &Response{
		Message:    Message{Role: RoleAssistant, Text: step.Text, ToolCalls: calls},
		Usage:      Usage{InputTokens: in, OutputTokens: words + 10*len(calls)},
		StopReason: stop,
	}, nil
}

// approxTokens approximates the tokens of s as one per four bytes.
func approxTokens(s string) int { return (len(s) + 3) / 4 }
