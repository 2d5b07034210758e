// Package elicitctx carries, in a context, an elicitor that takes the
// place of an agent's own (Config.Elicitor) for the runs started under that
// context, nested runs included: the a2a server puts its task's there when
// ServerConfig.AskClient is set, so that the questions of a served run
// become the task's input-required turns. Package agent reads it; the value
// is an agent.Elicitor, typed any here because agent imports this package.
package elicitctx

import "context"

type key struct{}

// With returns a context whose runs ask e instead of their agent's own
// elicitor.
func With(ctx context.Context, e any) context.Context { return context.WithValue(ctx, key{}, e) }

// From returns the elicitor With put in ctx, or nil.
func From(ctx context.Context) any { return ctx.Value(key{}) }
