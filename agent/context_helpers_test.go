package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/internal/tokens"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// serverTools builds n toolsets ("servers") of per tools each, named as the
// mcp package names tools, with the descriptions and schemas of the
// reference servers' real tools. Every call is counted by name.
func serverTools(t testing.TB, n, per int, calls *sync.Map) []agent.Toolset {
	ref := testkit.ReferenceTools(t)
	var sets []agent.Toolset
	for s := range n {
		server := fmt.Sprintf("srv%02d", s)
		var tools []agent.Tool
		for j := range per {
			rt := ref[(s*per+j)%len(ref)]
			name := "mcp__" + server + "__" + rt.Name
			tools = append(tools, agent.NewFuncTool(agent.ToolSpec{Name: name, Description: rt.Description,
				InputSchema: rt.InputSchema, ReadOnly: true, Source: agent.Provenance{Kind: failure.SourceMCP, Name: server, Tool: rt.Name}},
				func(_ context.Context, args json.RawMessage) (*agent.Result, error) {
					if calls != nil {
						v, _ := calls.LoadOrStore(name, new(atomic.Int32))
						v.(*atomic.Int32).Add(1)
					}
					return agent.TextResult("ran " + name + " with " + string(args)), nil
				}))
		}
		sets = append(sets, agent.NewToolset(server, tools...))
	}
	return sets
}

func callsOf(m *sync.Map, name string) int {
	v, ok := m.Load(name)
	if !ok {
		return 0
	}
	return int(v.(*atomic.Int32).Load())
}

// seen is one request as the model received it.
type seen struct {
	tools   []string
	msgs    []llm.Message
	tokens  int
	compact bool
}

// recorder is a model that records every request it gets (turns and
// summaries) and passes it to its inner model.
type recorder struct {
	inner llm.Model
	mu    sync.Mutex
	reqs  []seen
}

func (m *recorder) Name() string { return m.inner.Name() }

func (m *recorder) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	s := seen{msgs: slices.Clone(req.Messages), tokens: promptTokens(req), compact: req.Compaction}
	for _, d := range req.Tools {
		s.tools = append(s.tools, d.Name)
	}
	m.mu.Lock()
	m.reqs = append(m.reqs, s)
	m.mu.Unlock()
	return m.inner.Generate(ctx, req)
}

// turns are the recorded conversation turns (summaries left out).
func (m *recorder) turns() []seen {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []seen
	for _, s := range m.reqs {
		if !s.compact {
			out = append(out, s)
		}
	}
	return out
}

func (m *recorder) summaries() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, s := range m.reqs {
		if s.compact {
			n++
		}
	}
	return n
}

// promptTokens counts a request as it was sent, independently of the
// agent's accounting: every part through the estimator, with the same
// per-definition and per-message overheads.
func promptTokens(req *llm.Request) int {
	n := tokens.Count(req.System)
	for _, d := range req.Tools {
		n += 8 + tokens.Count(d.Name) + tokens.Count(d.Description) + tokens.Count(string(d.Schema))
	}
	for _, m := range req.Messages {
		n += 4 + tokens.Count(m.Text)
		for _, c := range m.ToolCalls {
			n += 8 + tokens.Count(c.Name) + tokens.Count(string(c.Args))
		}
		for _, r := range m.ToolResults {
			n += 8 + tokens.Count(r.Content)
		}
	}
	return n
}

func turnInfos(evs []agent.Event) []*agent.ContextInfo {
	var out []*agent.ContextInfo
	for _, e := range eventsOf(evs, agent.EventTurnStarted) {
		out = append(out, e.Context)
	}
	return out
}
