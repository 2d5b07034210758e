package anthropic

import (
	"encoding/json"
	"strconv"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// Structured output (Request.Output). A model with structured outputs
// (Claude Sonnet 4.5, Opus 4.5, Haiku 4.5 and later) gets the schema as
// output_config.format, generally available since the beta's output_format
// and structured-outputs-2025-11-13 header moved there, and its answer is
// constrained to it: a text block of JSON, streamed as text. An older model
// gets a tool named after Output.Name whose input schema is the answer's,
// and tool_choice forces a tool call: the tool itself when the request has
// no other tools, any tool when it has (so that the model can still use
// them on the way to its answer). The input of a call of that tool becomes
// the answer's text (streamed as it arrives), not a tool call. Its schema
// is asked, not enforced (Capabilities.StructuredOutput is false): the
// caller validates.
//
// With thinking on, the API takes only tool_choice auto: a forced tool is
// then offered but not forced, and a model that answers in text instead
// answers in text (which the caller's validation reports); structured
// outputs are not affected.

// outputConfig is the request's output_config: the answer's format and
// the reasoning effort (thinking.go).
type outputConfig struct {
	Effort string        `json:"effort,omitempty"`
	Format *outputFormat `json:"format,omitempty"`
}

type outputFormat struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema"`
}

// toolChoice is the request's tool_choice: "auto", "any", or "tool" with
// the tool's Name.
type toolChoice struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

// defaultOutputName names the answer's tool when Output.Name is empty.
const defaultOutputName = "answer"

// shapeOutput asks for the answer's shape the model's way.
func shapeOutput(r *anthropicRequest, g generation, req *llm.Request) {
	o := req.Output
	if o == nil {
		return
	}
	if g.structuredOutputs() {
		if r.OutputConfig == nil {
			r.OutputConfig = &outputConfig{}
		}
		r.OutputConfig.Format = &outputFormat{Type: "json_schema", Schema: wire.ToolSchema(o.Schema)}
		return
	}
	name := answerTool(req)
	desc := o.Description
	if desc == "" {
		desc = "Give your final answer by calling this tool; its input is the answer."
	}
	r.Tools = append(r.Tools, anthropicTool{Name: name, Description: desc, InputSchema: wire.ToolSchema(o.Schema)})
	if len(r.Tools) == 1 {
		r.ToolChoice = &toolChoice{Type: "tool", Name: name}
	} else {
		r.ToolChoice = &toolChoice{Type: "any"}
	}
}

// answerTool is the name of the tool an answer is forced through, for a
// model without structured outputs ("" for others, or with no Output):
// Output.Name, or "answer", suffixed with a number if a tool of the
// request has that name already.
func answerTool(req *llm.Request) string {
	if req.Output == nil {
		return ""
	}
	base := req.Output.Name
	if base == "" {
		base = defaultOutputName
	}
	taken := func(n string) bool {
		for _, d := range req.Tools {
			if d.Name == n {
				return true
			}
		}
		return false
	}
	name := base
	for i := 2; taken(name); i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	return name
}

// forcedTool is the name of the tool the answer of req comes through on a
// model of generation g ("" when it comes as text).
func forcedTool(g generation, req *llm.Request) string {
	if req.Output == nil || g.structuredOutputs() {
		return ""
	}
	return answerTool(req)
}
