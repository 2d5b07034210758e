package llm

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/failure"
)

// FallbackConfig configures [NewFallback]. Only Models is required.
type FallbackConfig struct {
	// Models are tried in order: the first answers each turn unless it
	// fails with a kind of On (or its circuit is open), and then the next.
	Models []Model
	// On lists the failure kinds that move a turn on to the next model
	// (default: Transient, Unavailable and Timeout, the failures of a
	// provider that is down or overloaded once its own retries are spent).
	// Any other failure (a refused request, a bad key, a cancelled call)
	// ends the turn: another model would be asked the same thing.
	On []failure.Kind
	// Policy says which models' circuits are open (Policy.Available with
	// the key failure.SourceModel and the model's Name): a model whose
	// circuit is open is skipped without a call. nil: failure.Default,
	// asked at each use.
	Policy failure.Policy
}

// Fallback is a model chain: each turn goes to the first model that can
// answer it. Its Capabilities are what every model of the chain accepts, so
// that a request fits whichever model answers; Response.Model says which
// did.
type Fallback struct {
	models []Model
	on     []failure.Kind
	policy failure.Policy
	name   string
}

// defaultFallbackOn are the kinds that move a turn to the next model.
var defaultFallbackOn = []failure.Kind{failure.Transient, failure.Unavailable, failure.Timeout}

// NewFallback returns the chain cfg describes. It fails with a
// failure.Config error when cfg has no model or a nil one.
func NewFallback(cfg FallbackConfig) (*Fallback, error) {
	if len(cfg.Models) == 0 {
		return nil, failure.New(failure.Config, failure.SourceModel, "a fallback chain needs at least one model (FallbackConfig.Models)")
	}
	names := make([]string, len(cfg.Models))
	for i, m := range cfg.Models {
		if m == nil {
			return nil, failure.New(failure.Config, failure.SourceModel, "FallbackConfig.Models has a nil model")
		}
		names[i] = m.Name()
	}
	on := cfg.On
	if len(on) == 0 {
		on = defaultFallbackOn
	}
	return &Fallback{models: slices.Clone(cfg.Models), on: slices.Clone(on), policy: cfg.Policy,
		name: "fallback(" + strings.Join(names, ", ") + ")"}, nil
}

// Name is "fallback(" and the models' names, in order, and ")".
func (f *Fallback) Name() string { return f.name }

// Generate asks each model in turn. A model that has streamed text through
// req.OnText is not left for the next (the text cannot be taken back): its
// failure ends the turn. When every model fails, the error is the last
// model's, joined with the earlier ones.
func (f *Fallback) Generate(ctx context.Context, req *Request) (*Response, error) {
	pol := failure.Or(f.policy)
	var errs []error
	for i, m := range f.models {
		last := i == len(f.models)-1
		if !last && !pol.Available(failure.Key{Source: failure.SourceModel, Name: m.Name()}) {
			errs = append(errs, &failure.Error{Kind: failure.Unavailable, Source: failure.SourceModel, Name: m.Name(),
				Message: "skipped: its circuit is open"})
			continue
		}
		r := *req
		streamed := false
		if req.OnText != nil {
			r.OnText = func(d string) {
				streamed = true
				req.OnText(d)
			}
		}
		resp, err := m.Generate(ctx, &r)
		if err == nil {
			if resp != nil && resp.Model == "" {
				resp.Model = m.Name()
			}
			return resp, nil
		}
		errs = append(errs, err)
		if last || streamed || ctx.Err() != nil || !f.fallsBack(err) {
			break
		}
	}
	return nil, joinFailures(errs)
}

// fallsBack reports whether err moves a turn to the next model.
func (f *Fallback) fallsBack(err error) bool {
	k := failure.KindOf(err)
	return slices.Contains(f.on, k)
}

// joinFailures returns the last failure, with the earlier ones joined to
// its cause, so errors.Is/As see the last one's kind first.
func joinFailures(errs []error) error {
	last := errs[len(errs)-1]
	if len(errs) == 1 {
		return last
	}
	fe := *failure.From(last)
	fe.Err = errors.Join(append([]error{fe.Err}, errs[:len(errs)-1]...)...)
	return &fe
}

// Capabilities are what every model of the chain accepts: the kinds of
// part all accept, the smallest window and part cap, and each feature only
// if all have it (a deferred tool, a schema or a reasoning setting must hold
// whichever model answers); PromptCache if any has it.
func (f *Fallback) Capabilities() Capabilities {
	out := CapabilitiesOf(f.models[0])
	for _, m := range f.models[1:] {
		c := CapabilitiesOf(m)
		out.ContextWindow = minKnown(out.ContextWindow, c.ContextWindow)
		out.MaxPartBytes = minKnown(out.MaxPartBytes, c.MaxPartBytes)
		out.Accepts = slices.DeleteFunc(slices.Clone(out.Accepts), func(k PartKind) bool { return !c.Accept(k) })
		out.StructuredOutput = out.StructuredOutput && c.StructuredOutput
		out.Reasoning = out.Reasoning && c.Reasoning
		out.ToolSearch = out.ToolSearch && c.ToolSearch
		out.PromptCache = out.PromptCache || c.PromptCache
	}
	return out
}

// minKnown is the smaller of a and b where 0 means unknown.
func minKnown[T int | int64](a, b T) T {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}
