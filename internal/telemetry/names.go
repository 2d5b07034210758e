package telemetry

import (
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
)

// The attribute names Switchboard writes, in one place: otel-go's semconv
// packages after v1.41.0 dropped the GenAI constants. The tests check them
// against semconv v1.36.0 and the latest set that still has them.
const (
	// GenAI conventions (both sets).
	KeyOperation      = attribute.Key("gen_ai.operation.name")
	KeyAgentName      = attribute.Key("gen_ai.agent.name")
	KeyAgentID        = attribute.Key("gen_ai.agent.id")
	KeyConversationID = attribute.Key("gen_ai.conversation.id")
	KeyRequestModel   = attribute.Key("gen_ai.request.model")
	KeyResponseModel  = attribute.Key("gen_ai.response.model")
	KeyInputTokens    = attribute.Key("gen_ai.usage.input_tokens")
	KeyOutputTokens   = attribute.Key("gen_ai.usage.output_tokens")
	// The token classes of the input and output counts (GenAI registry,
	// development status: semantic-conventions #3383 for reasoning), set
	// when not zero.
	KeyCacheReadTokens  = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	KeyCacheWriteTokens = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	KeyReasoningTokens  = attribute.Key("gen_ai.usage.reasoning.output_tokens")
	KeyToolName         = attribute.Key("gen_ai.tool.name")
	KeyToolCallID       = attribute.Key("gen_ai.tool.call.id")
	KeyToolType         = attribute.Key("gen_ai.tool.type")
	KeyTokenType        = attribute.Key("gen_ai.token.type")
	KeyErrorType        = attribute.Key("error.type")
	KeyResponseID       = attribute.Key("gen_ai.response.id")
	KeyFinishReasons    = attribute.Key("gen_ai.response.finish_reasons")
	KeyMaxTokens        = attribute.Key("gen_ai.request.max_tokens")
	KeyTemperature      = attribute.Key("gen_ai.request.temperature")
	KeyServerAddress    = attribute.Key("server.address")
	KeyServerPort       = attribute.Key("server.port")

	// MCP conventions (semconv 1.37 and later), on the spans of MCP calls
	// made and served.
	KeyMCPMethod          = attribute.Key("mcp.method.name")
	KeyJSONRPCRequestID   = attribute.Key("jsonrpc.request.id")
	KeyMCPSession         = attribute.Key("mcp.session.id")
	KeyMCPProtocolVersion = attribute.Key("mcp.protocol.version")
	KeyMCPResourceURI     = attribute.Key("mcp.resource.uri")
	KeyNetworkTransport   = attribute.Key("network.transport")
	KeyGenAIPromptName    = attribute.Key("gen_ai.prompt.name")

	// Messaging conventions, on the bus worker's PRODUCER and CONSUMER
	// spans.
	KeyMessagingSystem      = attribute.Key("messaging.system")
	KeyMessagingOperation   = attribute.Key("messaging.operation.name")
	KeyMessagingOpType      = attribute.Key("messaging.operation.type")
	KeyMessagingDestination = attribute.Key("messaging.destination.name")
	KeyMessagingConsumerGrp = attribute.Key("messaging.consumer.group.name")

	// KeySystem is 1.36's provider attribute; KeyProviderName replaces it in
	// the latest experimental set.
	KeySystem       = attribute.Key("gen_ai.system")
	KeyProviderName = attribute.Key("gen_ai.provider.name")
	// Latest experimental set only.
	KeyWorkflowName   = attribute.Key("gen_ai.workflow.name")
	KeyInputMessages  = attribute.Key("gen_ai.input.messages")
	KeyOutputMessages = attribute.Key("gen_ai.output.messages")
	KeyToolArguments  = attribute.Key("gen_ai.tool.call.arguments")
	KeyToolResult     = attribute.Key("gen_ai.tool.call.result")

	// Switchboard's own (no convention covers them).
	KeyToolSource     = attribute.Key("switchboard.tool.source")
	KeyToolSourceName = attribute.Key("switchboard.tool.source_name")
	KeyRun            = attribute.Key("switchboard.run.id")
	KeyParentRun      = attribute.Key("switchboard.run.parent")
	KeyAttempt        = attribute.Key("switchboard.attempt")
	KeyPermission     = attribute.Key("switchboard.permission")
	KeyCircuitKey     = attribute.Key("switchboard.circuit.source")
	KeyCircuitState   = attribute.Key("switchboard.circuit.state")
	KeyBusOp          = attribute.Key("switchboard.bus.operation")
	KeyA2AMethod      = attribute.Key("switchboard.a2a.method")
	KeyContentPrompt  = attribute.Key("switchboard.input")
	KeyContentAnswer  = attribute.Key("switchboard.output")
	KeyParked         = attribute.Key("switchboard.run.parked")
	KeyA2APeer        = attribute.Key("switchboard.a2a.peer")
	// KeyCost is what a chat (or a whole run) cost in US dollars, priced by
	// the agent's price table; set only when known (no convention has a
	// cost attribute).
	KeyCost = attribute.Key("switchboard.usage.cost")
)

// Operation names (gen_ai.operation.name) and span-name prefixes.
const (
	OpInvokeAgent    = "invoke_agent"
	OpInvokeWorkflow = "invoke_workflow"
	OpChat           = "chat"
	OpExecuteTool    = "execute_tool"
)

// Span event names.
const (
	EventRetry      = "switchboard.retry"
	EventCircuit    = "switchboard.circuit_open"
	EventPermission = "switchboard.permission"
	EventFailure    = "switchboard.failure"
	// EventParked marks a run that stopped to wait for a person (its
	// status stays unset: a wait is not an error).
	EventParked = "switchboard.parked"
	// EventUserMessage and EventAssistantMessage carry content in the 1.36
	// set (as span events; the latest set uses attributes).
	EventUserMessage      = "gen_ai.user.message"
	EventAssistantMessage = "gen_ai.assistant.message"
)

// Metric names.
const (
	MetricTokenUsage     = "gen_ai.client.token.usage"
	MetricOpDuration     = "gen_ai.client.operation.duration"
	MetricToolCalls      = "switchboard.tool.calls"
	MetricToolDuration   = "switchboard.tool.duration"
	MetricCircuitChanges = "switchboard.circuit.state_changes"
	MetricBusDuration    = "switchboard.bus.request.duration"
	MetricA2ARequests    = "switchboard.a2a.server.requests"
	// MetricCost sums what chats cost in US dollars, by the chat's
	// attributes (provider, model), when the cost is known.
	MetricCost = "switchboard.model.cost"
)

// ScopeName is the instrumentation scope of every tracer and meter.
const ScopeName = "github.com/switchboard-dev/switchboard"

// The schema URLs of the two sets of conventions: the scope's schema is the
// set whose names the spans carry.
const (
	SchemaURL136    = "https://opentelemetry.io/schemas/1.36.0"
	SchemaURLLatest = "https://opentelemetry.io/schemas/1.41.0"
)

// KindParked is the failure kind of a run that parked for a person
// (failure.Parked's text): not an error on a span.
const KindParked = "parked"

// UnknownToolSpan is the span name of a call to a tool the model made up:
// one name whatever the model sent, so span names stay few.
const UnknownToolSpan = OpExecuteTool + " unknown_tool"

// EnvOptIn is the environment variable that selects the conventions, and
// OptInLatest its value for the latest experimental GenAI set.
const (
	EnvOptIn    = "OTEL_SEMCONV_STABILITY_OPT_IN"
	OptInLatest = "gen_ai_latest_experimental"
)

// latestFromEnv reports whether the environment opts in to the latest
// experimental GenAI conventions (a comma-separated list, per the spec).
func latestFromEnv() bool {
	for _, v := range strings.Split(os.Getenv(EnvOptIn), ",") {
		if strings.TrimSpace(v) == OptInLatest {
			return true
		}
	}
	return false
}
