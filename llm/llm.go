// Package llm is Switchboard's model layer, provider-neutral: the [Model]
// interface (one assistant turn, with native tool calls), the messages and
// their [Part]s, typed answers ([Output]), reasoning, prompt caching,
// [Usage] by token class and its [Cost], the [Capabilities] a model tells,
// a fallback chain ([NewFallback]) and a deterministic scripted model for
// tests and the offline demo ([NewScripted]).
//
//	model := llm.NewScripted(llm.Say("hello"))
//	resp, err := model.Generate(ctx, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}})
//
// The providers are packages of their own under llm/provider (openai,
// anthropic, gemini, ...). The agent loop only sees Model; every failure is
// a *failure.Error.
package llm

import (
	"context"
	"encoding/json"
)

// Message roles (Message.Role).
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	// RoleTool carries tool results back to the model.
	RoleTool = "tool"
)

// Message is one entry of a conversation.
//
// A user message has Text, Parts or both. An assistant message has Text,
// ToolCalls or both (in that order). A tool message has ToolResults, one
// per call of the preceding assistant message.
type Message struct {
	// Role is the author: RoleUser, RoleAssistant or RoleTool.
	Role string `json:"role"`
	// Text is the message's text; it comes before Parts.
	Text string `json:"text,omitempty"`
	// Parts are the message's media (images, audio, documents) and any
	// further text, in order, after Text. A provider sends each part its
	// model accepts (Capabilities.Accept); the agent turns the others into
	// text before they reach a model that does not.
	Parts       []Part       `json:"parts,omitempty"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
	// Reasoning is the model's reasoning before its answer, as the provider
	// shows it (a summary, for some); it is never part of the answer.
	// Providers that need their reasoning sent back (Anthropic's signed
	// thinking blocks) keep that form in Provider.
	Reasoning string `json:"reasoning,omitempty"`
	// Provider holds what an answer carried in its provider's own format
	// with no field here (a JSON array of Anthropic content blocks: server
	// tool use and results, such as the provider's tool search), sent back
	// with the conversation; other providers ignore it.
	Provider json.RawMessage `json:"provider,omitempty"`
}

// ToolCall is the model's request to run a tool.
type ToolCall struct {
	// ID is the provider's identifier of the call; results refer to it.
	ID string `json:"id"`
	// Name is the tool's name as the model was told it.
	Name string `json:"name"`
	// Args is the JSON the model produced; it may be malformed.
	Args json.RawMessage `json:"args,omitempty"`
}

// ToolResult answers one ToolCall.
type ToolResult struct {
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	// Content is the result's text.
	Content string `json:"content"`
	// Parts are the result's media (an MCP image or audio result, an
	// embedded resource, an A2A file part), after Content.
	Parts   []Part `json:"parts,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
}

// ToolDef describes a tool to the model.
type ToolDef struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Schema is the JSON Schema of the tool's input object.
	Schema json.RawMessage `json:"schema,omitempty"`
	// Deferred asks the provider's own tool search to hold the tool back
	// until the model finds it (set by the agent only for models that have
	// one: ContextConfig.ProviderSearch).
	Deferred bool `json:"deferred,omitempty"`
}

// Request is one model turn.
type Request struct {
	// System is the system prompt.
	System string
	// Messages is the conversation so far.
	Messages []Message
	// Tools the model may call this turn.
	Tools []ToolDef
	// MaxTokens caps the answer (0: provider default).
	MaxTokens int
	// Temperature, if non-nil, sets the sampling temperature.
	Temperature *float64
	// StopSequences end the answer where the model would write one of them
	// (OpenAI "stop", Anthropic "stop_sequences"); the sequence itself is
	// not part of the answer.
	StopSequences []string
	// OnText, if set, receives the answer's text as it streams. A model that
	// does not stream calls it once with the whole text.
	OnText func(delta string)
	// Compaction marks a request that asks for a summary of old turns, so
	// the agent's prompt fits the context window (the scripted model
	// answers it without using a step of its script).
	Compaction bool
	// Output, if set, asks for an answer that is one JSON value valid
	// against Output.Schema, through the provider's own mechanism where it
	// has one (Capabilities.StructuredOutput). The caller still validates
	// the answer.
	Output *Output
	// Reasoning, if set, asks the model to reason before it answers, where
	// it can (Capabilities.Reasoning); other models ignore it.
	Reasoning *Reasoning
	// CacheKey names the conversation, so that a provider routes requests
	// that share a prompt prefix to the same cache (OpenAI's
	// prompt_cache_key); "" sends none. The agent sets its session's id.
	CacheKey string
	// NoCache asks the provider not to mark a cacheable prefix (Anthropic's
	// cache_control breakpoints, which the provider places by default).
	NoCache bool
}

// Output is the shape asked of an answer: a JSON Schema for one JSON value.
type Output struct {
	// Name names the schema to the provider (OpenAI requires one; default
	// "answer"): letters, digits, '_' and '-', at most 64.
	Name string `json:"name,omitempty"`
	// Description says what the answer is for (optional).
	Description string `json:"description,omitempty"`
	// Schema is the JSON Schema of the answer.
	Schema json.RawMessage `json:"schema"`
}

// Effort is a provider-neutral amount of reasoning.
type Effort string

// Reasoning efforts, from least to most.
const (
	EffortMinimal Effort = "minimal"
	EffortLow     Effort = "low"
	EffortMedium  Effort = "medium"
	EffortHigh    Effort = "high"
)

// Reasoning asks a model to reason before it answers: by effort (OpenAI's
// reasoning effort), by a budget of tokens (Anthropic's extended thinking,
// Gemini's thinking budget), or both. A provider that takes only one of the
// two derives it from the other.
type Reasoning struct {
	Effort Effort `json:"effort,omitempty"`
	// BudgetTokens caps the tokens spent reasoning (0: derived from Effort).
	BudgetTokens int `json:"budget_tokens,omitempty"`
}

// Usage reports the tokens a turn consumed, as the provider reported them,
// in one convention whatever the provider's: InputTokens counts every input
// token (cached, written to the cache or neither) and OutputTokens every
// output token (reasoning included); the other fields say how many of those
// were of each class.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	// CacheReadTokens of the input were read from the provider's prompt
	// cache.
	CacheReadTokens int `json:"cache_read_tokens,omitempty"`
	// CacheWriteTokens of the input were written to the prompt cache.
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	// ReasoningTokens of the output were spent reasoning.
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
}

// Total is input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Add returns the sum of u and v, class by class.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
		ReasoningTokens:  u.ReasoningTokens + v.ReasoningTokens,
	}
}

// Response is the model's answer to one Request.
type Response struct {
	// Message is the assistant message (Role is RoleAssistant).
	Message Message
	// Usage is the provider-reported token usage (zero when not reported).
	Usage Usage
	// StopReason is the provider's reason for stopping, as reported.
	StopReason string
	// Model is the model that answered, as the provider named it ("" when
	// not reported); it may be more precise than the one asked for.
	Model string
	// ID is the provider's id of the answer ("" when not reported).
	ID string
}

// Model generates one assistant turn.
//
// A Model may also be a [Describer], telling the agent what it accepts;
// one that is not is taken to accept text and tool calls only.
type Model interface {
	// Name identifies the provider and model, e.g. "openai/gpt-4o-mini" or
	// "scripted (offline)".
	Name() string
	// Generate answers req. Errors are *failure.Error values.
	Generate(ctx context.Context, req *Request) (*Response, error)
}

// Describer is a [Model] that says what it accepts.
type Describer interface {
	Capabilities() Capabilities
}

// Capabilities says what a model accepts beyond text and tool calls. The
// zero value is a model of text and tool calls only, of unknown window.
type Capabilities struct {
	// ContextWindow is the model's context window in tokens (0: unknown;
	// the agent then uses the window known for the model's name).
	ContextWindow int
	// Accepts lists the kinds of Part the model takes as input, in user
	// messages and tool results. PartText is always accepted.
	Accepts []PartKind
	// MaxPartBytes caps the size of one media part the provider sends
	// inline (0: no cap of the provider's own); larger parts are described
	// in text instead.
	MaxPartBytes int64
	// StructuredOutput means Request.Output is enforced by the provider
	// (a constrained answer), not only asked for.
	StructuredOutput bool
	// Reasoning means Request.Reasoning is honoured.
	Reasoning bool
	// ToolSearch means ToolDef.Deferred is honoured: the provider's own
	// tool search holds deferred tools back until the model finds them.
	ToolSearch bool
	// PromptCache means the provider caches prompt prefixes and reports
	// Usage.CacheReadTokens.
	PromptCache bool
	// Endpoint is the base URL the provider sends requests to
	// ("https://api.openai.com/v1"; "" when unknown). The agent's chat
	// spans report its host and port as server.address and server.port.
	Endpoint string
}

// Accept reports whether the model takes parts of kind k.
func (c Capabilities) Accept(k PartKind) bool {
	if k == PartText {
		return true
	}
	for _, a := range c.Accepts {
		if a == k {
			return true
		}
	}
	return false
}

// CapabilitiesOf returns m's Capabilities if it is a Describer, else the
// zero value.
func CapabilitiesOf(m Model) Capabilities {
	if d, ok := m.(Describer); ok {
		return d.Capabilities()
	}
	return Capabilities{}
}
