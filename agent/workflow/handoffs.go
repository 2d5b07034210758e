package workflow

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// HandoffsConfig configures a [NewHandoffs] workflow.
type HandoffsConfig struct {
	Common
	// Agents take part in the conversation, known by their names (at least
	// one). Give each the handoff tools (agent.NewHandoffTool) naming the
	// agents it may hand to.
	Agents []*agent.Agent
	// Entry names the agent that receives the workflow's input (default:
	// the first of Agents).
	Entry string
	// MaxHandoffs bounds the handoffs of one run (default 8).
	MaxHandoffs int
}

// handoffsRunner runs a conversation that agents hand to each other. The entry
// agent answers the input; when its model calls a handoff tool, its run ends
// and the named agent takes over with what the tool says to pass on: the
// task alone, a summary and the task, or the full history (with the task as
// the next message). The agent that answers without handing off gives the
// workflow's answer.
type handoffsRunner struct {
	base
	agents map[string]*agent.Agent
	entry  string
	max    int
}

var _ agent.Runner = (*handoffsRunner)(nil)

// NewHandoffs validates cfg and returns the workflow.
func NewHandoffs(cfg HandoffsConfig) (agent.Runner, error) {
	var rs []agent.Runner
	for _, a := range cfg.Agents {
		if a != nil {
			rs = append(rs, a)
		}
	}
	b, err := newBase(cfg.Common, rs...)
	if err != nil {
		return nil, err
	}
	if len(cfg.Agents) == 0 {
		return nil, failure.New(failure.Config, failure.SourceAgent, "workflow "+cfg.Name+": handoffs need at least one agent")
	}
	h := &handoffsRunner{base: b, agents: map[string]*agent.Agent{}, entry: cfg.Entry, max: cfg.MaxHandoffs}
	for i, a := range cfg.Agents {
		if a == nil {
			return nil, failure.New(failure.Config, failure.SourceAgent, fmt.Sprintf("workflow %s: agent %d is nil", cfg.Name, i))
		}
		if _, dup := h.agents[a.Name()]; dup {
			return nil, failure.New(failure.Config, failure.SourceAgent, fmt.Sprintf("workflow %s: two agents are named %q", cfg.Name, a.Name()))
		}
		h.agents[a.Name()] = a
	}
	if h.entry == "" {
		h.entry = cfg.Agents[0].Name()
	}
	if _, ok := h.agents[h.entry]; !ok {
		return nil, failure.New(failure.Config, failure.SourceAgent, fmt.Sprintf("workflow %s: the entry agent %q is not among the agents", cfg.Name, h.entry))
	}
	if h.max <= 0 {
		h.max = 8
	}
	return h, nil
}

// sessionRunner runs one agent's turn of the conversation as a step.
type sessionRunner struct {
	a *agent.Agent
	s *agent.Session
}

func (r sessionRunner) Name() string        { return r.a.Name() }
func (r sessionRunner) Description() string { return r.a.Description() }
func (r sessionRunner) Stream(ctx context.Context, input string) iter.Seq2[agent.Event, error] {
	return r.s.Stream(ctx, input)
}

// Stream runs the conversation on input, yielding its events.
func (h *handoffsRunner) Stream(ctx context.Context, input string) iter.Seq2[agent.Event, error] {
	return h.stream(ctx, input, func(w *wrun, task string) (string, error) {
		cur, in := h.agents[h.entry], task
		var hist []llm.Message
		for hop := 0; ; hop++ {
			s := cur.NewSessionFrom(hist)
			ans, err := w.end(w.runOnce(sessionRunner{cur, s}, hop, in))
			if err != nil {
				return "", err
			}
			ho := ans.Handoff
			if ho == nil {
				return ans.Text, nil
			}
			next, ok := h.agents[ho.To]
			var bad error
			switch {
			case !ok:
				bad = &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Name: h.name,
					Message: fmt.Sprintf("agent %q handed off to %q, which is not in the workflow", cur.Name(), ho.To)}
			case hop+1 > h.max:
				bad = &failure.Error{Kind: failure.Budget, Source: failure.SourceAgent, Name: h.name,
					Message: fmt.Sprintf("the workflow's budget of %d handoffs is exhausted", h.max)}
			}
			if bad != nil {
				w.handle(bad, nil)
				return "", bad
			}
			in, hist = ho.Input(), nil
			if ho.Context == "full" {
				hist = append(slices.Clone(ho.History), llm.Message{Role: llm.RoleAssistant,
					Text: fmt.Sprintf("(%s handed the conversation to %s.)", cur.Name(), ho.To)})
			}
			cur = next
		}
	})
}

// runOnce runs a step once, outside the policy's retries (a conversation
// is not retried: the session has moved on).
func (w *wrun) runOnce(s agent.Runner, index int, input string) stepResult {
	start := time.Now()
	info := agent.StepInfo{Name: s.Name(), Index: index}
	ans, err := w.attempt(w.ctx, s, &info, input, w.emit)
	info.Elapsed = time.Since(start)
	return stepResult{ans: ans, err: err, info: info}
}
