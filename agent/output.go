package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/schema"
	"github.com/switchboard-dev/switchboard/llm"
)

// defaultOutputRepairs is the default Config.OutputRepairs.
const defaultOutputRepairs = 2

// defaultOutputName is the name of an Output that has none.
const defaultOutputName = "answer"

// AnswerError says why a typed answer was refused: its text is not one
// JSON value valid against the schema asked for. A run whose repairs are
// spent ends with a *failure.Error of kind Model whose cause (Err) is an
// *AnswerError, so errors.As(err, &ae) finds the problem.
type AnswerError struct {
	// Output is the name of the schema asked for.
	Output string
	// Problem is the validator's message: "not valid JSON: …", or every
	// violation with its location ("at /total: got string, want number").
	Problem string
	// Repairs is the number of repair turns the run spent before it
	// gave up.
	Repairs int
}

// Error describes the refused answer.
func (e *AnswerError) Error() string {
	return fmt.Sprintf("the answer does not match the schema %q (after %d repairs): %s", e.Output, e.Repairs, e.Problem)
}

// OutputFor returns the Output asking for an answer that decodes into a
// T: its JSON Schema derived from T with github.com/google/jsonschema-go
// (the library go-sdk uses; struct fields without omitempty are required,
// unknown properties are refused, and a field's `jsonschema:"..."` tag is
// its description), named for T. Use it as [Config.Output] or
// [Input.Output], or let [RunAs] do it.
func OutputFor[T any]() (*llm.Output, error) {
	t := reflect.TypeFor[T]()
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Err: err,
			Message: fmt.Sprintf("no JSON Schema can describe the answer type %s: %v", t, err)}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Err: err,
			Message: fmt.Sprintf("the JSON Schema of the answer type %s does not encode: %v", t, err)}
	}
	name := defaultOutputName
	if n := t.Name(); n != "" {
		name = ToolName(n)
	}
	return &llm.Output{Name: name, Schema: b}, nil
}

// answerSchemas compiles the schemas of the answers [RunAs] validates
// itself (those of runners that do not), once each.
var answerSchemas = schema.NewCache()

// RunAs runs input on r asking for an answer of type T (the schema of
// [OutputFor], in place of the runner's own Config.Output; the rest of the
// context's [Input] is kept) and decodes it. An [*Agent] validates the
// answer and repairs it (see [Config.OutputRepairs]); the answer of a
// runner that does not honour [Input.Output] is validated here, without
// repair. A refused answer is a *failure.Error of kind Model whose cause
// is an [*AnswerError]. The Answer is returned whenever the run gave one.
func RunAs[T any](ctx context.Context, r Runner, input string) (T, *Answer, error) {
	var zero T
	out, err := OutputFor[T]()
	if err != nil {
		return zero, nil, err
	}
	in, _ := InputFrom(ctx)
	in.Output = out
	ans, err := Run(WithInput(ctx, in), r, input)
	if err != nil {
		return zero, ans, err
	}
	data := ans.Data
	if len(data) == 0 {
		data, err = checkAnswer(answerSchemas, out, ans.Text)
		if err != nil {
			return zero, ans, refused(out, err.Error(), 0, r.Name())
		}
		ans.Data = data
	}
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return zero, ans, refused(out, "the answer does not decode into "+reflect.TypeFor[T]().String()+": "+err.Error(), 0, r.Name())
	}
	return v, ans, nil
}

// Typed is a [Runner] whose answers have a declared shape: the Data of
// its final Answer is valid against Output. An [*Agent] with
// [Config.Output] is one; the surfaces that serve runners (mcp/server's
// tools, a2a's server, [AsTool]) declare the shape to their callers and
// return the typed value beside the text.
type Typed interface {
	Runner
	// Output is the shape of the runner's answers (nil: text).
	Output() *llm.Output
}

// OutputOf returns the declared shape of r's answers: its Output if it is
// [Typed], else nil.
func OutputOf(r Runner) *llm.Output {
	if t, ok := r.(Typed); ok {
		return t.Output()
	}
	return nil
}

// Output is the shape of the agent's answers: [Config.Output] (nil: text).
func (a *Agent) Output() *llm.Output { return a.cfg.Output }

// checkOutput validates an Output given in a Config or an Input: a name
// providers accept and a schema that compiles.
func checkOutput(c *schema.Cache, o *llm.Output, where string) error {
	if o == nil {
		return nil
	}
	if o.Name != "" && (len(o.Name) > maxToolName || ToolName(o.Name) != o.Name) {
		return failure.New(failure.Config, failure.SourceAgent, fmt.Sprintf(
			"%s.Name %q: use letters, digits, '_' and '-', at most %d", where, o.Name, maxToolName))
	}
	if len(o.Schema) == 0 {
		return failure.New(failure.Config, failure.SourceAgent, where+".Schema is empty")
	}
	if _, err := c.Compile(o.Schema); err != nil {
		return &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Err: err,
			Message: fmt.Sprintf("%s.Schema: %v", where, err)}
	}
	return nil
}

// outputName is o's name, or the default.
func outputName(o *llm.Output) string {
	if o.Name != "" {
		return o.Name
	}
	return defaultOutputName
}

// checkAnswer returns the JSON value of an answer's text if it is valid
// against o's schema, else the validator's message as the error. A text
// that is one fenced code block (```json … ```) is read inside the fence.
func checkAnswer(c *schema.Cache, o *llm.Output, text string) (json.RawMessage, error) {
	raw := []byte(unfence(text))
	if err := c.Validate(o.Schema, raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// unfence returns the text inside one Markdown code fence around the whole
// text, else the text trimmed.
func unfence(text string) string {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return t
	}
	body := strings.TrimSuffix(t[3:], "```")
	if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.ContainsAny(body[:nl], "{[\"") {
		body = body[nl+1:] // the fence's language tag
	}
	return strings.TrimSpace(body)
}

// refused is the failure of an answer that stays invalid: kind Model, its
// cause an *AnswerError.
func refused(o *llm.Output, problem string, repairs int, name string) *failure.Error {
	ae := &AnswerError{Output: outputName(o), Problem: problem, Repairs: repairs}
	return &failure.Error{Kind: failure.Model, Source: failure.SourceModel, Name: name, Op: "answer", Err: ae,
		Message: ae.Error()}
}

// output is the shape asked of the run's answer: the Input's, else the
// agent's (nil: text).
func (r *run) output() *llm.Output {
	if r.in.Output != nil {
		return r.in.Output
	}
	return r.a.cfg.Output
}

// outputNote is the part of the system prompt that asks for the typed
// answer, for a model that does not enforce Request.Output itself ("" when
// no answer shape is asked or the model enforces it).
func (r *run) outputNote() string {
	o := r.output()
	if o == nil || llm.CapabilitiesOf(r.a.cfg.Model).StructuredOutput {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "When you give your final answer (after any tool calls), answer with exactly one JSON value "+
		"valid against the JSON Schema %q below, and nothing else: no prose and no code fence.", outputName(o))
	if o.Description != "" {
		fmt.Fprintf(&b, " The answer is %s.", strings.TrimSuffix(o.Description, "."))
	}
	b.WriteString("\n<answer_schema>\n")
	b.Write(o.Schema)
	b.WriteString("\n</answer_schema>")
	return b.String()
}

// repairs is the bound on a run's repair turns.
func (a *Agent) repairs() int {
	switch n := a.cfg.OutputRepairs; {
	case n < 0:
		return 0
	case n == 0:
		return defaultOutputRepairs
	default:
		return n
	}
}

// typedAnswer checks the model's final text against the run's answer
// shape. With no shape, or a valid answer (its value put in the Answer's
// Data), it returns nil, nil. An invalid answer is a failure of kind
// InvalidArgs handed to the policy: reported, the returned user message
// tells the model what was wrong, for a repair turn; aborted, or once the
// run's repairs are spent (a failure of kind Model, its cause an
// *AnswerError), the failure is returned, already handled.
func (r *run) typedAnswer(text string) (*llm.Message, error) {
	o := r.output()
	if o == nil {
		return nil, nil
	}
	data, err := checkAnswer(r.a.schemas, o, text)
	if err == nil {
		r.ans.Data = data
		return nil, nil
	}
	if errors.Is(err, schema.ErrBadSchema) { // checked at the run's start: not expected
		return nil, r.handle(&failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Err: err,
			Message: fmt.Sprintf("the answer schema %q is unusable: %v", outputName(o), err)}, nil).Err
	}
	model := r.a.cfg.Model.Name()
	if r.repaired >= r.a.repairs() {
		return nil, r.handle(refused(o, err.Error(), r.repaired, model), nil).Err
	}
	oc := r.handle(&failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceModel, Name: model, Op: "answer",
		Message: fmt.Sprintf("the answer does not match the schema %q: %s", outputName(o), err)}, nil)
	if oc.Abort {
		return nil, oc.Err
	}
	r.repaired++
	return &llm.Message{Role: llm.RoleUser, Text: fmt.Sprintf(
		"Your last answer was refused: it does not match the JSON Schema %q of the answer: %s\n"+
			"Answer again with only the corrected JSON value, and nothing else.", outputName(o), err)}, nil
}
