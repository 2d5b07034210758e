package agent

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/switchboard-dev/switchboard/failure"
)

// staticToolset is a fixed list of tools.
type staticToolset struct {
	name  string
	tools []Tool
}

// NewToolset returns a toolset of fixed tools.
func NewToolset(name string, tools ...Tool) Toolset {
	return &staticToolset{name: name, tools: slices.Clone(tools)}
}

// Name returns the toolset's name.
func (s *staticToolset) Name() string { return s.name }

// Tools returns the tools.
func (s *staticToolset) Tools(context.Context) ([]Tool, error) { return s.tools, nil }

// funcTool is a Tool backed by a Go function.
type funcTool struct {
	spec ToolSpec
	fn   func(ctx context.Context, args json.RawMessage) (*Result, error)
}

// NewFuncTool returns a local tool that calls fn. spec.Source defaults to
// {Kind: failure.SourceTool, Tool: spec.Name}.
func NewFuncTool(spec ToolSpec, fn func(ctx context.Context, args json.RawMessage) (*Result, error)) Tool {
	if spec.Source.Kind == "" {
		spec.Source = Provenance{Kind: failure.SourceTool, Tool: spec.Name}
	}
	return &funcTool{spec: spec, fn: fn}
}

// TypedTool returns a local tool whose arguments are decoded into In and
// whose output Out is returned as JSON (or as text, when Out is a string).
// schema is the JSON Schema of In.
func TypedTool[In, Out any](spec ToolSpec, fn func(ctx context.Context, in In) (Out, error)) Tool {
	return NewFuncTool(spec, func(ctx context.Context, raw json.RawMessage) (*Result, error) {
		var in In
		if err := json.Unmarshal(raw, &in); err != nil {
			return ErrorResult("invalid arguments: %v", err), nil
		}
		out, err := fn(ctx, in)
		if err != nil {
			return nil, err
		}
		if s, ok := any(out).(string); ok {
			return TextResult(s), nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, err
		}
		return &Result{Parts: []Part{{Type: PartJSON, JSON: b}}}, nil
	})
}

// Spec returns the tool's spec.
func (f *funcTool) Spec() ToolSpec { return f.spec }

// Call calls the function.
func (f *funcTool) Call(ctx context.Context, args json.RawMessage) (*Result, error) {
	return f.fn(ctx, args)
}
