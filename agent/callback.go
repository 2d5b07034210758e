package agent

import (
	"context"
	"encoding/json"

	"github.com/switchboard-dev/switchboard/llm"
)

// ElicitationKind says what a question for a person is about.
type ElicitationKind string

// Elicitation kinds.
const (
	// ElicitForm is an MCP form elicitation: Schema describes the answer.
	ElicitForm ElicitationKind = "form"
	// ElicitURL is an MCP URL elicitation: the person visits URL.
	ElicitURL ElicitationKind = "url"
	// ElicitInput is an A2A input-required turn: the answer is free text
	// (or Schema-shaped data).
	ElicitInput ElicitationKind = "input"
	// ElicitAuth is an A2A auth-required turn.
	ElicitAuth ElicitationKind = "auth"
	// ElicitPermission asks whether a tool call may run.
	ElicitPermission ElicitationKind = "permission"
)

// Elicitation is a question for a person.
type Elicitation struct {
	Kind ElicitationKind `json:"kind"`
	// Run and Call place the question in a run, when known.
	Run  string `json:"run,omitempty"`
	Call string `json:"call,omitempty"`
	// Source is who asks: an MCP server, an A2A peer, the permission policy.
	Source Provenance `json:"source"`
	// Message is the question, as the asker worded it.
	Message string `json:"message"`
	// Schema is the JSON Schema of the expected answer (form, input).
	Schema json.RawMessage `json:"schema,omitempty"`
	// URL to visit (url mode); ID is the elicitation's id at its source.
	URL string `json:"url,omitempty"`
	ID  string `json:"id,omitempty"`
	// Tool and Args describe the call a permission question is about.
	Tool string          `json:"tool,omitempty"`
	Args json.RawMessage `json:"args,omitempty"`
}

// ElicitAction is a person's answer to an elicitation.
type ElicitAction string

// Elicitation answers, as MCP names them.
const (
	ElicitAccept  ElicitAction = "accept"
	ElicitDecline ElicitAction = "decline"
	ElicitCancel  ElicitAction = "cancel"
)

// ElicitationResult is the answer to an Elicitation.
type ElicitationResult struct {
	Action ElicitAction `json:"action"`
	// Content is the answer's data (form fields, or {"text": ...} for input).
	Content map[string]any `json:"content,omitempty"`
	// Reason explains a decline, for logs and the model.
	Reason string `json:"reason,omitempty"`
}

// Elicitor asks a person. The bus implements it over NATS; a terminal or a
// web UI answers. An error means nobody could be asked (typed failure);
// a refusal is a result with Action decline or cancel.
//
// An elicitor that wants to hear when a URL-mode elicitation finished at
// its source (MCP notifications/elicitation/complete), so that a UI can
// close the prompt it showed, also has the optional method
//
//	ElicitationComplete(ctx context.Context, e Elicitation)
//
// where e is the original question's identity: Kind ElicitURL, ID, Source,
// and Run and Call when known. The bus's Elicitor has it.
type Elicitor interface {
	Elicit(ctx context.Context, e Elicitation) (ElicitationResult, error)
}

// ElicitorFunc adapts a function to Elicitor.
type ElicitorFunc func(ctx context.Context, e Elicitation) (ElicitationResult, error)

// Elicit calls f.
func (f ElicitorFunc) Elicit(ctx context.Context, e Elicitation) (ElicitationResult, error) {
	return f(ctx, e)
}

// ModelPreferences are an MCP server's hints for choosing a model.
type ModelPreferences struct {
	Hints                []string `json:"hints,omitempty"`
	CostPriority         float64  `json:"cost_priority,omitempty"`
	SpeedPriority        float64  `json:"speed_priority,omitempty"`
	IntelligencePriority float64  `json:"intelligence_priority,omitempty"`
}

// SamplingRequest is a source's request to use the host's model (MCP
// sampling/createMessage).
type SamplingRequest struct {
	Run           string           `json:"run,omitempty"`
	Source        Provenance       `json:"source"`
	System        string           `json:"system,omitempty"`
	Messages      []llm.Message    `json:"messages"`
	MaxTokens     int              `json:"max_tokens"`
	Temperature   *float64         `json:"temperature,omitempty"`
	StopSequences []string         `json:"stop_sequences,omitempty"`
	Preferences   ModelPreferences `json:"model_preferences"`
}

// SamplingResult is the model's answer to a SamplingRequest.
type SamplingResult struct {
	Model      string    `json:"model"`
	Text       string    `json:"text"`
	StopReason string    `json:"stop_reason,omitempty"`
	Usage      llm.Usage `json:"usage"`
}

// Sampler serves sampling requests. The bus implements it over NATS, and
// its default responder answers with an llm.Model under a policy.
type Sampler interface {
	Sample(ctx context.Context, req SamplingRequest) (SamplingResult, error)
}

// samplerFunc adapts a function to Sampler.
type samplerFunc func(ctx context.Context, req SamplingRequest) (SamplingResult, error)

// Sample calls f.
func (f samplerFunc) Sample(ctx context.Context, req SamplingRequest) (SamplingResult, error) {
	return f(ctx, req)
}
