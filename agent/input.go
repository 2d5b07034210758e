package agent

import (
	"context"

	"github.com/switchboard-dev/switchboard/llm"
)

// Input is what a run takes beside its text: media sent with the prompt and
// the shape asked of the answer. A [Runner]'s Stream takes its text; the rest
// travels in the context, set with [WithInput] and read with [InputFrom], so
// that every Runner (a workflow, a worker pool, an A2A peer) passes it on.
type Input struct {
	// Parts are the media sent with the prompt (an image, a PDF), after its
	// text, in order.
	Parts []llm.Part
	// Output, if set, asks for a typed answer of this schema, in place of
	// the agent's Config.Output.
	Output *llm.Output
	// Tools are offered to the model for this run only, beside the
	// agent's own (an AG-UI client's frontend tools, package agent/agui);
	// a name one of the agent's tools has is hidden and reported. They go
	// through the permission policy like any tool.
	Tools []Tool
	// Instructions are added to the run's system prompt after the agent's
	// own (an AG-UI client's system messages and context).
	Instructions string
	// Conversation, if set, names the conversation the run belongs to in
	// place of its session's id: the prompt cache key and the run's
	// gen_ai.conversation.id. It is for callers that start a session per
	// run of one conversation (an AG-UI thread, package agent/agui), so
	// that the provider routes its turns to the same prompt cache.
	Conversation string
}

// inputKey is the context key of an Input.
type inputKey struct{}

// WithInput returns a context under which the next run started takes in as
// the rest of its input. The runs nested in that run (its tool calls'
// runs, a workflow's steps) do not see it: each run takes the Input of the
// context it was started with and removes it from the context it gives its
// tools.
func WithInput(ctx context.Context, in Input) context.Context {
	return context.WithValue(ctx, inputKey{}, &in)
}

// InputFrom returns the Input that ctx carries for the run started under it.
func InputFrom(ctx context.Context) (Input, bool) {
	in, ok := ctx.Value(inputKey{}).(*Input)
	if !ok || in == nil {
		return Input{}, false
	}
	return *in, true
}

// withoutInput hides a run's Input from what the run starts.
func withoutInput(ctx context.Context) context.Context {
	if _, ok := InputFrom(ctx); !ok {
		return ctx
	}
	return context.WithValue(ctx, inputKey{}, (*Input)(nil))
}
