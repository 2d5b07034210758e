package testkit

import (
	"context"

	"github.com/switchboard-dev/switchboard/agent"
)

// SamplerFunc adapts a function to agent.Sampler.
type SamplerFunc func(ctx context.Context, req agent.SamplingRequest) (agent.SamplingResult, error)

// Sample calls f.
func (f SamplerFunc) Sample(ctx context.Context, req agent.SamplingRequest) (agent.SamplingResult, error) {
	return f(ctx, req)
}

// EventSinkFunc adapts a function to agent.EventSink.
type EventSinkFunc func(ctx context.Context, ev agent.Event)

// Emit calls f.
func (f EventSinkFunc) Emit(ctx context.Context, ev agent.Event) { f(ctx, ev) }
