package agent

import (
	"context"
	"encoding/json"
	"slices"
)

// StaticToolset is a fixed list of tools.
type StaticToolset struct {
	name  string
	tools []Tool
}

// NewToolset returns a toolset of fixed tools.
func NewToolset(name string, tools ...Tool) *StaticToolset {
	return &StaticToolset{name: name, tools: slices.Clone(tools)}
}

// Name returns the toolset's name.
func (s *StaticToolset) Name() string { return s.name }

// Tools returns the tools.
func (s *StaticToolset) Tools(context.Context) ([]Tool, error) { return s.tools, nil }

// FuncTool is a Tool backed by a Go function.
type FuncTool struct {
	spec ToolSpec
	fn   func(ctx context.Context, args json.RawMessage) (*Result, error)
}

// NewFuncTool returns a local tool that calls fn. spec.Source defaults to
// {Kind: "local", Tool: spec.Name}.
func NewFuncTool(spec ToolSpec, fn func(ctx context.Context, args json.RawMessage) (*Result, error)) *FuncTool {
	if spec.Source.Kind == "" {
		spec.Source = Provenance{Kind: "local", Tool: spec.Name}
	}
	return &FuncTool{spec: spec, fn: fn}
}

// TypedTool returns a local tool whose arguments are decoded into In and
// whose output Out is returned as JSON (or as text, when Out is a string).
// schema is the JSON Schema of In.
func TypedTool[In, Out any](spec ToolSpec, fn func(ctx context.Context, in In) (Out, error)) *FuncTool {
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
func (f *FuncTool) Spec() ToolSpec { return f.spec }

// Call calls the function.
func (f *FuncTool) Call(ctx context.Context, args json.RawMessage) (*Result, error) {
	return f.fn(ctx, args)
}
