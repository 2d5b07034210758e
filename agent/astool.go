package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/schema"
	"github.com/switchboard-dev/switchboard/llm"
)

// outputSchema is the schema of o (nil for nil).
func outputSchema(o *llm.Output) json.RawMessage {
	if o == nil {
		return nil
	}
	return o.Schema
}

// defaultAgentToolSchema is the input of an agent offered as a tool.
const defaultAgentToolSchema = `{"type":"object","properties":{"input":{"type":"string",` +
	`"description":"The task for the agent, self-contained: it does not see this conversation."}},` +
	`"required":["input"],"additionalProperties":false}`

// AgentToolOptions configures AsTool. The zero value (and nil) offers the
// runner under its own name and description, with one string argument,
// "input".
type AgentToolOptions struct {
	// Name is the tool's name (default: the runner's name, with characters
	// providers refuse in tool names replaced by "_").
	Name string
	// Description tells the model when to call the agent (default: the
	// runner's description).
	Description string
	// InputSchema is the JSON Schema of the tool's arguments (default: an
	// object with one required string, "input").
	InputSchema json.RawMessage
	// Input renders the runner's input from the validated arguments
	// (default: the "input" argument with the default schema, and the
	// arguments' JSON text with a custom one).
	Input func(args json.RawMessage) (string, error)
	// Output, if set, asks each run for a typed answer of this shape (as
	// [Input.Output]), in place of the runner's own ([OutputOf]). The
	// tool's spec declares the shape as its OutputSchema, and a typed
	// answer is the call's result as one PartJSON part.
	Output *llm.Output
	// Timeout bounds one call, overriding the calling agent's ToolTimeout:
	// a sub-agent's run usually takes longer than a tool call. Zero keeps
	// the caller's; the sub-agent's own Budget bounds it either way.
	Timeout time.Duration
	// Destructive marks a runner whose work deletes or overwrites (the
	// default permission policy then asks before each call). By default an
	// agent tool is classified read-only: the sub-agent applies its own
	// permission policy to every tool it calls.
	Destructive bool
}

// agentTool is a Runner offered as a tool.
type agentTool struct {
	r     Runner
	spec  ToolSpec
	input func(json.RawMessage) (string, error)
	// output is AgentToolOptions.Output (nil: the runner's own shape).
	output *llm.Output
}

// AsTool offers a Runner (an *Agent, a workflow, a remote worker pool) to
// another agent as a tool. Each call starts a new run of r with the call's
// context: r's own budgets apply, cancelling the call cancels the run, and
// every event of the run is forwarded into the calling run as an
// EventNested whose Parent names the call (one trace, parent and child).
//
// The tool's result is the run's answer: a typed answer (the runner is
// [Typed], or AgentToolOptions.Output asks for one) is one PartJSON part
// holding Answer.Data, and the spec's OutputSchema declares its schema. A run that ends on its own budget
// returns an error result the calling model can act on; any other failure
// is returned typed, so the caller's failure policy handles it (a failure
// the sub-run already retried is not retried again).
func AsTool(r Runner, opts *AgentToolOptions) (Tool, error) {
	var o AgentToolOptions
	if opts != nil {
		o = *opts
	}
	if r == nil {
		return nil, failure.New(failure.Config, failure.SourceAgent, "AsTool needs a runner")
	}
	if o.Name == "" && r.Name() != "" {
		o.Name = ToolName(r.Name())
	}
	if o.Name == "" {
		return nil, failure.New(failure.Config, failure.SourceAgent, "AsTool: the runner has no name; set AgentToolOptions.Name")
	}
	if o.Description == "" {
		o.Description = r.Description()
	}
	t := &agentTool{r: r, input: o.Input, output: o.Output}
	if err := checkOutput(schema.NewCache(), o.Output, "AgentToolOptions.Output"); err != nil {
		return nil, err
	}
	out := o.Output
	if out == nil {
		out = OutputOf(r)
	}
	schema := o.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(defaultAgentToolSchema)
		if t.input == nil {
			t.input = inputArg
		}
	} else if !json.Valid(schema) {
		return nil, failure.New(failure.Config, failure.SourceAgent, fmt.Sprintf("AsTool %q: the input schema is not valid JSON", o.Name))
	}
	if t.input == nil {
		t.input = func(args json.RawMessage) (string, error) { return string(args), nil }
	}
	t.spec = ToolSpec{Name: o.Name, Description: o.Description, InputSchema: schema, Timeout: o.Timeout,
		OutputSchema: outputSchema(out),
		ReadOnly:     !o.Destructive, Destructive: o.Destructive,
		Source: Provenance{Kind: failure.SourceAgent, Name: r.Name(), Tool: o.Name}}
	return t, nil
}

// inputArg reads the "input" argument of the default schema.
func inputArg(args json.RawMessage) (string, error) {
	var in struct {
		Input string `json:"input"`
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	if err := dec.Decode(&in); err != nil {
		return "", fmt.Errorf("the arguments must be an object with a string \"input\": %w", err)
	}
	if strings.TrimSpace(in.Input) == "" {
		return "", errors.New("\"input\" is empty; give the agent its task")
	}
	return in.Input, nil
}

func (t *agentTool) Spec() ToolSpec { return t.spec }

func (t *agentTool) Call(ctx context.Context, args json.RawMessage) (*Result, error) {
	input, err := t.input(args)
	if err != nil {
		return ErrorResult("%s", err), nil
	}
	call, _ := CallFromContext(ctx)
	var ans *Answer
	var runErr error
	if t.output != nil {
		ctx = WithInput(ctx, Input{Output: t.output})
	}
	for ev, err := range t.r.Stream(ctx, input) {
		call.Forward(ev)
		if err != nil {
			runErr = err
			break
		}
		if ev.Type == EventFinal {
			ans = ev.Answer
			if ans == nil {
				ans = &Answer{Run: ev.Run, Text: ev.Text, Handoff: ev.Handoff}
			}
		}
	}
	switch {
	case runErr != nil:
		if fe := failure.From(runErr); fe.Kind == failure.Budget && ctx.Err() == nil {
			return ErrorResult("the agent %s stopped before answering: %s", t.r.Name(), fe.Message), nil
		}
		return nil, runErr
	case ans == nil:
		return nil, &failure.Error{Kind: failure.Internal, Source: failure.SourceAgent, Name: t.r.Name(),
			Message: "the agent's run ended without an answer"}
	case ans.Handoff != nil:
		return TextResult(fmt.Sprintf("The agent %s handed the task to %s: %s", t.r.Name(), ans.Handoff.To, ans.Handoff.Task)), nil
	case len(ans.Data) > 0:
		return &Result{Parts: []Part{{Type: PartJSON, JSON: ans.Data}}}, nil
	}
	return TextResult(ans.Text), nil
}
