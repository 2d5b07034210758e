// Package llm is Switchboard's model layer: a small provider-neutral Model
// interface with native tool calls; OpenAI and OpenAI-compatible providers
// (Ollama, vLLM, Gemini's compatible endpoint) through
// github.com/tmc/langchaingo; Anthropic's Messages API spoken directly
// (langchaingo v0.1.14 drops every part of an assistant message after the
// first); and a deterministic scripted model for tests and the offline demo.
//
// The agent loop only sees Model. Provider errors are classified into the
// failure taxonomy (failure): 429 and 5xx are Transient, 401/403 are
// PermissionDenied, other 4xx are Model.
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
// A user message has Text. An assistant message has Text, ToolCalls or both
// (in that order). A tool message has ToolResults, one per call of the
// preceding assistant message.
type Message struct {
	// Role is the author: RoleUser, RoleAssistant or RoleTool.
	Role        string       `json:"role"`
	Text        string       `json:"text,omitempty"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
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
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Content string `json:"content"`
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
}

// Usage reports the tokens a turn consumed, as the provider reported them.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Total is input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

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
type Model interface {
	// Name identifies the provider and model, e.g. "openai/gpt-4o-mini" or
	// "scripted (offline)".
	Name() string
	// Generate answers req. Errors are *failure.Error values.
	Generate(ctx context.Context, req *Request) (*Response, error)
}
