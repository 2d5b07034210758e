// Package idempotency carries a tool call's idempotency key from the agent
// to the toolsets that send it on (the mcp package in the request's _meta,
// the a2a package as the message id), through the call's context.
package idempotency

import "context"

// MetaKey is the _meta key of an MCP tools/call request that carries the
// key.
const MetaKey = "dev.switchboard/idempotency-key"

type ctxKey struct{}

// With returns ctx carrying key (ctx itself when key is empty).
func With(ctx context.Context, key string) context.Context {
	if key == "" {
		return ctx
	}
	return context.WithValue(ctx, ctxKey{}, key)
}

// Key returns the key ctx carries ("" if none).
func Key(ctx context.Context) string {
	k, _ := ctx.Value(ctxKey{}).(string)
	return k
}
