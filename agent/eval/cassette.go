package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/redact"
	"github.com/switchboard-dev/switchboard/llm"
)

// cassetteVersion is the version of the cassette format written.
const cassetteVersion = 1

// maxCassetteBytes bounds a cassette file.
const maxCassetteBytes = 64 << 20

// Cassette is a recorded run: every request the agent made of its model
// and the model's answer, secrets redacted. Replaying it ([NewReplayer])
// answers the same requests with the same answers, offline.
type Cassette struct {
	Version int `json:"version"`
	// Model is the name of the model recorded.
	Model string `json:"model"`
	Turns []Turn `json:"turns"`

	once   sync.Once
	leaves [][]leaf
}

// recorded returns the leaves of turn i's request, computed once.
func (c *Cassette) recorded(i int) []leaf {
	c.once.Do(func() {
		c.leaves = make([][]leaf, len(c.Turns))
		for j, t := range c.Turns {
			c.leaves[j] = flatten(t.Request)
		}
	})
	return c.leaves[i]
}

// Turn is one recorded model call.
type Turn struct {
	Request  Request      `json:"request"`
	Response llm.Response `json:"response"`
}

// Request is what a recorded turn asked of the model.
type Request struct {
	// Partial marks a request known only in part (a cassette built from a
	// run's events): Messages then holds only the newest message (the
	// input or the tool results), and replay checks only that.
	Partial    bool          `json:"partial,omitempty"`
	System     string        `json:"system,omitempty"`
	Tools      []llm.ToolDef `json:"tools,omitempty"`
	Messages   []llm.Message `json:"messages"`
	Output     *llm.Output   `json:"output,omitempty"`
	Compaction bool          `json:"compaction,omitempty"`
}

// LoadCassette reads a cassette file.
func LoadCassette(path string) (*Cassette, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, cassetteErr(path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCassetteBytes+1))
	if err != nil {
		return nil, cassetteErr(path, err)
	}
	if len(b) > maxCassetteBytes {
		return nil, cassetteErr(path, fmt.Errorf("larger than %d bytes", maxCassetteBytes))
	}
	c, err := ParseCassette(b)
	if err != nil {
		return nil, cassetteErr(path, err)
	}
	return c, nil
}

// ParseCassette reads a cassette's JSON.
func ParseCassette(b []byte) (*Cassette, error) {
	var c Cassette
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("not a cassette: %w", err)
	}
	if c.Version != cassetteVersion {
		return nil, fmt.Errorf("cassette version %d, want %d", c.Version, cassetteVersion)
	}
	return &c, nil
}

func cassetteErr(path string, err error) error {
	return &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Err: err,
		Message: fmt.Sprintf("cassette %s: %v", path, err)}
}

// Save writes c to path, creating its directory.
func (c *Cassette) Save(path string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Recorder is an llm.Model that passes every request to its model and
// records it, with the answer, secrets redacted (the patterns of error
// redaction: bearer tokens, API keys, passwords in URLs and key=value).
type Recorder struct {
	model llm.Model
	mu    sync.Mutex
	turns []Turn
}

// NewRecorder returns a recorder of m's turns.
func NewRecorder(m llm.Model) *Recorder { return &Recorder{model: m} }

// Name is the recorded model's name.
func (r *Recorder) Name() string { return r.model.Name() }

// Capabilities are the recorded model's.
func (r *Recorder) Capabilities() llm.Capabilities { return llm.CapabilitiesOf(r.model) }

// Generate asks the model and records the turn.
func (r *Recorder) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	resp, err := r.model.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	t := Turn{Request: recordRequest(req), Response: redactResponse(*resp)}
	r.mu.Lock()
	r.turns = append(r.turns, t)
	r.mu.Unlock()
	return resp, nil
}

// Cassette returns what was recorded so far.
func (r *Recorder) Cassette() *Cassette {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &Cassette{Version: cassetteVersion, Model: r.model.Name(), Turns: clone(r.turns)}
}

// clone deep-copies v through JSON, so that a record shares nothing with
// what the agent goes on changing.
func clone[T any](v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out T
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

func recordRequest(req *llm.Request) Request {
	r := Request{System: redact.Secrets(req.System), Tools: clone(req.Tools), Output: clone(req.Output),
		Messages: clone(req.Messages), Compaction: req.Compaction}
	for i := range r.Messages {
		redactMessage(&r.Messages[i])
	}
	return r
}

func redactResponse(resp llm.Response) llm.Response {
	resp = clone(resp)
	redactMessage(&resp.Message)
	return resp
}

func redactMessage(m *llm.Message) {
	m.Text = redact.Secrets(m.Text)
	m.Reasoning = redact.Secrets(m.Reasoning)
	for i := range m.Parts {
		m.Parts[i].Text = redact.Secrets(m.Parts[i].Text)
	}
	for i := range m.ToolCalls {
		if len(m.ToolCalls[i].Args) > 0 {
			m.ToolCalls[i].Args = json.RawMessage(redact.Secrets(string(m.ToolCalls[i].Args)))
		}
	}
	for i := range m.ToolResults {
		m.ToolResults[i].Content = redact.Secrets(m.ToolResults[i].Content)
		for j := range m.ToolResults[i].Parts {
			m.ToolResults[i].Parts[j].Text = redact.Secrets(m.ToolResults[i].Parts[j].Text)
		}
	}
}

// Replayer is an llm.Model that answers from a cassette: the n-th request
// gets the n-th recorded answer, provided it is the request recorded. The
// first request that differs (another tool result, another system prompt
// or tool description) ends the replay with a [*Divergence].
type Replayer struct {
	c      *Cassette
	ignore []*regexp.Regexp
	mu     sync.Mutex
	pos    int
	div    *Divergence
	name   string
}

// NewReplayer returns a model replaying c. Text that ignore matches (ids,
// times: what differs from run to run) is left out of the comparison.
func NewReplayer(c *Cassette, ignore ...*regexp.Regexp) *Replayer {
	return &Replayer{c: c, ignore: ignore, name: "replay of " + c.Model}
}

// mask replaces what ignore matches in s.
func mask(ignore []*regexp.Regexp, s string) string {
	for _, re := range ignore {
		s = re.ReplaceAllString(s, "…")
	}
	return s
}

// Name says what is replayed.
func (r *Replayer) Name() string { return r.name }

// Diverged returns the first divergence, or nil.
func (r *Replayer) Diverged() *Divergence {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.div
}

// Remaining is the number of recorded turns not replayed.
func (r *Replayer) Remaining() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.c.Turns) - r.pos
}

// Generate answers req from the cassette.
func (r *Replayer) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.div != nil {
		d := r.div
		r.mu.Unlock()
		return nil, d.failure()
	}
	if r.pos >= len(r.c.Turns) {
		r.div = &Divergence{Turn: r.pos + 1, Path: "(turn)", Recorded: fmt.Sprintf("%d turns", len(r.c.Turns)),
			Replayed: fmt.Sprintf("a request for turn %d", r.pos+1)}
		d := r.div
		r.mu.Unlock()
		return nil, d.failure()
	}
	t := &r.c.Turns[r.pos]
	if d := diverge(r.c, r.pos, req, r.ignore); d != nil {
		d.Turn = r.pos + 1
		r.div = d
		r.mu.Unlock()
		return nil, d.failure()
	}
	r.pos++
	r.mu.Unlock()
	resp := t.Response
	resp.Message.ToolCalls = slices.Clone(resp.Message.ToolCalls)
	if req.OnText != nil && resp.Message.Text != "" {
		req.OnText(resp.Message.Text)
	}
	return &resp, nil
}

// Divergence is where a replayed run asked its model something other
// than the recorded run did: the first differing field of the request.
type Divergence struct {
	// Turn is the model turn (from 1).
	Turn int
	// Path locates the field ("messages[2].tool_results[0].content").
	Path string
	// Recorded and Replayed are its two values (for text, the first line
	// that differs).
	Recorded, Replayed string
}

// Error shows the difference.
func (d *Divergence) Error() string {
	return fmt.Sprintf("replay diverged at turn %d, %s:\n  recorded: %s\n  replayed: %s", d.Turn, d.Path, d.Recorded, d.Replayed)
}

func (d *Divergence) failure() error {
	return &failure.Error{Kind: failure.Config, Source: failure.SourceModel, Name: "replay", Err: d, Message: d.Error()}
}

// diverge returns the first difference between recorded turn i of c and
// a live request, or nil. Live text is compared as it is first and, where
// it differs, redacted as the record was.
func diverge(c *Cassette, i int, req *llm.Request, ignore []*regexp.Regexp) *Divergence {
	rec := c.Turns[i].Request
	if rec.Partial {
		return divergePartial(rec, recordRequest(req), ignore)
	}
	if sameRequest(&rec, req, ignore) {
		return nil
	}
	a := c.recorded(i)
	b := flatten(Request{System: req.System, Tools: req.Tools, Messages: req.Messages, Output: req.Output, Compaction: req.Compaction})
	for i := 0; i < len(a) || i < len(b); i++ {
		switch {
		case i >= len(a):
			return &Divergence{Path: b[i].path, Recorded: "(absent)", Replayed: b[i].value}
		case i >= len(b):
			return &Divergence{Path: a[i].path, Recorded: a[i].value, Replayed: "(absent)"}
		case a[i].path != b[i].path:
			return &Divergence{Path: a[i].path + " / " + b[i].path, Recorded: a[i].path + " = " + a[i].value, Replayed: b[i].path + " = " + b[i].value}
		case a[i].value != b[i].value && a[i].value != redactLeaf(b[i].value) &&
			mask(ignore, a[i].value) != mask(ignore, redactLeaf(b[i].value)):
			ra, rb := firstDiffLine(a[i].value, redactLeaf(b[i].value))
			return &Divergence{Path: a[i].path, Recorded: ra, Replayed: rb}
		}
	}
	return nil
}

// redactLeaf redacts a JSON string leaf's text.
func redactLeaf(v string) string {
	var s string
	if json.Unmarshal([]byte(v), &s) != nil {
		return v
	}
	b, _ := json.Marshal(redact.Secrets(s))
	return string(b)
}

// divergePartial checks the newest message of a live request against a
// partial record: the same role and tool names, and each recorded text
// found in the live one (events show results without their envelope).
func divergePartial(rec, live Request, ignore []*regexp.Regexp) *Divergence {
	if len(rec.Messages) == 0 || len(live.Messages) == 0 {
		return nil
	}
	want, got := rec.Messages[len(rec.Messages)-1], live.Messages[len(live.Messages)-1]
	if want.Role != got.Role {
		return &Divergence{Path: "last message role", Recorded: want.Role, Replayed: got.Role}
	}
	if want.Role == llm.RoleUser && !strings.Contains(got.Text, want.Text) {
		return &Divergence{Path: "input", Recorded: fmt.Sprintf("%q", want.Text), Replayed: fmt.Sprintf("%q", got.Text)}
	}
	if len(want.ToolResults) != len(got.ToolResults) {
		return &Divergence{Path: "tool results", Recorded: fmt.Sprintf("%d results", len(want.ToolResults)),
			Replayed: fmt.Sprintf("%d results", len(got.ToolResults))}
	}
	for i := range want.ToolResults {
		w, g := want.ToolResults[i], got.ToolResults[i]
		p := fmt.Sprintf("tool_results[%d]", i)
		if w.Name != g.Name {
			return &Divergence{Path: p + ".name", Recorded: w.Name, Replayed: g.Name}
		}
		if !strings.Contains(mask(ignore, g.Content), mask(ignore, strings.TrimSpace(w.Content))) {
			ra, rb := firstDiffLine(w.Content, g.Content)
			return &Divergence{Path: p + ".content", Recorded: ra, Replayed: rb}
		}
	}
	return nil
}

type leaf struct{ path, value string }

// flatten lists a request's leaves in order, leaving out call ids (the
// agent makes them per run).
func flatten(r Request) []leaf {
	b, _ := json.Marshal(r)
	var v any
	_ = json.Unmarshal(b, &v)
	var out []leaf
	walk(&out, "", v)
	return out
}

func walk(out *[]leaf, path string, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			if k == "id" || k == "call_id" || k == "ID" {
				continue
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			// Tool call arguments are JSON text: compare their values.
			if k == "args" {
				if s, ok := x[k].(string); ok {
					var inner any
					if json.Unmarshal([]byte(s), &inner) == nil {
						walk(out, p, inner)
						continue
					}
				}
			}
			walk(out, p, x[k])
		}
	case []any:
		for i, e := range x {
			walk(out, fmt.Sprintf("%s[%d]", path, i), e)
		}
	default:
		b, _ := json.Marshal(x)
		*out = append(*out, leaf{path, string(b)})
	}
}

// firstDiffLine returns the first line where two JSON strings' texts
// differ, with its number, quoted.
func firstDiffLine(a, b string) (string, string) {
	var sa, sb string
	if json.Unmarshal([]byte(a), &sa) != nil || json.Unmarshal([]byte(b), &sb) != nil {
		return a, b
	}
	la, lb := strings.Split(sa, "\n"), strings.Split(sb, "\n")
	if len(la) == 1 && len(lb) == 1 {
		return fmt.Sprintf("%q", clip(sa)), fmt.Sprintf("%q", clip(sb))
	}
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: %q", i+1, clip(x)), fmt.Sprintf("line %d: %q", i+1, clip(y))
		}
	}
	return fmt.Sprintf("%q", clip(sa)), fmt.Sprintf("%q", clip(sb))
}

// CassetteFromEvents builds a cassette from the events of a past run (the
// bus keeps them: bus.Bus.Replay(ctx, run)). Events do not hold whole
// requests, so its turns are partial: replay checks each turn's input or
// tool results, not the system prompt or tool definitions.
func CassetteFromEvents(events iter.Seq2[agent.Event, error]) (*Cassette, error) {
	c := &Cassette{Version: cassetteVersion, Model: "run events"}
	pending := llm.Message{}
	order := map[string]int{} // call id -> its place among the turn's calls
	run := ""
	for ev, err := range events {
		if err != nil {
			return nil, err
		}
		if ev.Type == agent.EventNested || ev.Parent != nil {
			continue
		}
		if run == "" {
			run = ev.Run
		}
		if ev.Run != run {
			continue
		}
		switch ev.Type {
		case agent.EventRunStarted:
			pending = llm.Message{Role: llm.RoleUser, Text: redact.Secrets(ev.Text)}
			if ev.Agent != "" {
				c.Model = "run events of " + ev.Agent
			}
		case agent.EventModelTurn:
			resp := llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Text: ev.Text, ToolCalls: clone(ev.Calls)}}
			if ev.Usage != nil {
				resp.Usage = *ev.Usage
			}
			c.Turns = append(c.Turns, Turn{Request: Request{Partial: true, Messages: []llm.Message{pending}},
				Response: redactResponse(resp)})
			// Tools run in parallel and finish in any order; the model sees
			// their results in the order of its calls.
			pending = llm.Message{Role: llm.RoleTool, ToolResults: make([]llm.ToolResult, len(ev.Calls))}
			clear(order)
			for i, call := range ev.Calls {
				order[call.ID] = i
				pending.ToolResults[i].Name = call.Name
			}
		case agent.EventToolFinished:
			if ev.Call == nil {
				continue
			}
			r := llm.ToolResult{Name: ev.Call.Tool, Content: redact.Secrets(ev.Result.Text())}
			if ev.Result != nil {
				r.IsError = ev.Result.IsError
			}
			if i, ok := order[ev.Call.ID]; ok {
				pending.ToolResults[i] = r
			} else {
				pending.ToolResults = append(pending.ToolResults, r)
			}
		}
	}
	if len(c.Turns) == 0 {
		return nil, fmt.Errorf("the events hold no model turn")
	}
	return c, nil
}

// LLM returns the recorded request as an llm.Request (to replay a turn by
// hand, or show it).
func (r Request) LLM() *llm.Request {
	c := clone(r)
	return &llm.Request{System: c.System, Tools: c.Tools, Messages: c.Messages, Output: c.Output, Compaction: c.Compaction}
}
