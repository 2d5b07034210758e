package bus

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// ModelHint maps a model-preference hint to a model: the first hint of a
// request that contains Hint (case-insensitively) picks Model.
type ModelHint struct {
	Hint  string
	Model llm.Model
}

// ModelSamplerConfig configures NewModelSampler. Model is required.
type ModelSamplerConfig struct {
	// Model answers requests no hint matches.
	Model llm.Model
	// Hints map model-preference hints to models, tried in the order of the
	// request's hints, then of this list.
	Hints []ModelHint
	// Policy decides whether to answer: agent.Ask (the default, as MCP
	// recommends a human in the loop) asks a person through Elicitor before
	// each request, agent.Allow answers every request, agent.Deny refuses
	// every one.
	Policy agent.Permission
	// Elicitor asks a person under agent.Ask; without one, asks are
	// declined.
	Elicitor agent.Elicitor
	// MaxTokens caps one answer: a request asking for more is clamped, one
	// asking for none gets the cap (default 4096).
	MaxTokens int
	// TotalTokens caps the tokens (input and output, as the model reports
	// them) of all requests this sampler answers; once spent, requests fail
	// with a Budget failure (default: no cap).
	TotalTokens int
}

// modelSampler is the default sampling responder: it answers with an
// llm.Model under a policy and token caps. It implements agent.Sampler;
// serve it with Bus.ServeSampling.
type modelSampler struct {
	cfg  ModelSamplerConfig
	used atomic.Int64
}

// NewModelSampler validates cfg and returns the default sampling
// responder: it answers with cfg.Model under cfg.Policy and the token caps.
// Serve it with Bus.ServeSampling.
func NewModelSampler(cfg ModelSamplerConfig) (agent.Sampler, error) {
	if cfg.Model == nil {
		return nil, failure.New(failure.Config, failure.SourceBus, "ModelSamplerConfig.Model is required")
	}
	switch cfg.Policy {
	case "":
		cfg.Policy = agent.Ask
	case agent.Ask, agent.Allow, agent.Deny:
	default:
		return nil, failure.New(failure.Config, failure.SourceBus, fmt.Sprintf("unknown sampling policy %q (want allow, ask or deny)", cfg.Policy))
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 4096
	}
	return &modelSampler{cfg: cfg}, nil
}

// spent returns the tokens spent so far.
func (m *modelSampler) spent() int { return int(m.used.Load()) }

// pick chooses the model for a request's preferences.
func (m *modelSampler) pick(p agent.ModelPreferences) llm.Model {
	for _, h := range p.Hints {
		h = strings.ToLower(h)
		if h == "" {
			continue
		}
		for _, mh := range m.cfg.Hints {
			if mh.Model != nil && strings.Contains(h, strings.ToLower(mh.Hint)) {
				return mh.Model
			}
		}
	}
	return m.cfg.Model
}

// Sample answers req with the chosen model, if the policy allows it.
func (m *modelSampler) Sample(ctx context.Context, req agent.SamplingRequest) (agent.SamplingResult, error) {
	who := req.Source.String()
	fail := func(kind failure.Kind, msg string, err error) (agent.SamplingResult, error) {
		return agent.SamplingResult{}, &failure.Error{Kind: kind, Source: failure.SourceBus, Name: req.Source.Name,
			Op: "sample", Message: msg, Err: err}
	}
	if len(req.Messages) == 0 {
		return fail(failure.InvalidArgs, "a sampling request needs at least one message", nil)
	}
	if m.cfg.TotalTokens > 0 && m.used.Load() >= int64(m.cfg.TotalTokens) {
		return fail(failure.Budget, fmt.Sprintf("the sampling token budget of %d is spent", m.cfg.TotalTokens), nil)
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 || maxTokens > m.cfg.MaxTokens {
		maxTokens = m.cfg.MaxTokens
	}
	switch m.cfg.Policy {
	case agent.Deny:
		return fail(failure.PermissionDenied, "the host's policy does not allow sampling", nil)
	case agent.Ask:
		if m.cfg.Elicitor == nil {
			return fail(failure.Declined, "sampling needs a person's approval and no one is available to give it", nil)
		}
		ans, err := m.cfg.Elicitor.Elicit(ctx, agent.Elicitation{
			Kind: agent.ElicitPermission, Run: req.Run, Source: req.Source, Tool: "sampling",
			Message: fmt.Sprintf("Allow %s to use the model for a completion of up to %d tokens?", who, maxTokens),
		})
		if err != nil {
			return fail(failure.KindOf(err), "approval for sampling could not be obtained", err)
		}
		if ans.Action != agent.ElicitAccept {
			msg := "the user declined the sampling request"
			if ans.Reason != "" {
				msg += " (" + ans.Reason + ")"
			}
			return fail(failure.Declined, msg, nil)
		}
	}
	model := m.pick(req.Preferences)
	msgs := req.Messages
	resp, err := model.Generate(ctx, &llm.Request{System: req.System, Messages: msgs, MaxTokens: maxTokens, Temperature: req.Temperature,
		StopSequences: req.StopSequences})
	if err != nil {
		fe := failure.From(err)
		if fe.Kind == failure.Unknown {
			c := *fe
			c.Kind, c.Source, c.Name = failure.Model, failure.SourceModel, model.Name()
			fe = &c
		}
		return agent.SamplingResult{}, fe
	}
	m.used.Add(int64(resp.Usage.Total()))
	text := resp.Message.Text
	stop := resp.StopReason
	// Providers stop at the sequences themselves; a model that does not
	// (the scripted one) is cut here.
	for _, w := range req.StopSequences {
		if i := strings.Index(text, w); w != "" && i >= 0 {
			text, stop = text[:i], "stop_sequence"
		}
	}
	return agent.SamplingResult{Model: model.Name(), Text: text, StopReason: stop, Usage: resp.Usage}, nil
}

// ElicitHandlers is the default elicitation responder: it passes each
// question to the handler registered for its kind (or the fallback), and
// declines, with a reason saying so, when none is registered. It implements
// agent.Elicitor; serve it with Bus.ServeElicitation.
type ElicitHandlers struct {
	mu       sync.RWMutex
	byKind   map[agent.ElicitationKind]agent.Elicitor
	fallback agent.Elicitor
}

// NewElicitHandlers returns an empty set of handlers (every question is
// declined until a handler is registered).
func NewElicitHandlers() *ElicitHandlers {
	return &ElicitHandlers{byKind: map[agent.ElicitationKind]agent.Elicitor{}}
}

// Handle registers h for questions of kind (nil removes it).
func (h *ElicitHandlers) Handle(kind agent.ElicitationKind, e agent.Elicitor) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e == nil {
		delete(h.byKind, kind)
		return
	}
	h.byKind[kind] = e
}

// HandleAll registers e for every kind without its own handler (nil
// removes it).
func (h *ElicitHandlers) HandleAll(e agent.Elicitor) {
	h.mu.Lock()
	h.fallback = e
	h.mu.Unlock()
}

// Elicit passes e to its handler, or declines.
func (h *ElicitHandlers) Elicit(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
	h.mu.RLock()
	handler, ok := h.byKind[e.Kind]
	if !ok {
		handler = h.fallback
	}
	h.mu.RUnlock()
	if handler == nil {
		return agent.ElicitationResult{Action: agent.ElicitDecline,
			Reason: fmt.Sprintf("no handler is registered for %q questions, so no one can answer", e.Kind)}, nil
	}
	return handler.Elicit(ctx, e)
}

var (
	_ agent.Sampler  = (*modelSampler)(nil)
	_ agent.Elicitor = (*ElicitHandlers)(nil)
)
