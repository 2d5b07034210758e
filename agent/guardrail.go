package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-dev/switchboard/failure"
)

// Guard checks what passes through an agent (Config.Guards): the run's
// input, each tool call before it runs, each tool result before the model
// sees it, and the answer before it is returned or streamed out. Check
// passes, rewrites (redacts) or trips; an error from Check (a judge model
// that failed, a deadline) blocks like a trip, as a failure of its own
// kind. Check may be called from several goroutines at once. Package
// agent/guard has the built-in guards.
type Guard interface {
	// Name identifies the guard in failures, events and logs.
	Name() string
	// Check inspects c.Text at c.Point.
	Check(ctx context.Context, c GuardCheck) (Verdict, error)
}

// LocalGuard is a [Guard] whose Check only computes over its text, in
// time bounded by the text's size, with no I/O and no waiting (the
// regular-expression guards of agent/guard). The agent runs it on the
// calling goroutine, still recovering a panic, without the goroutine and
// timer a deadline costs; GuardRule.Timeout does not apply to it.
type LocalGuard interface {
	Guard
	// Local marks the guard as local; it is never called.
	Local()
}

// GuardPoint is where a guard applies; points combine with |.
type GuardPoint uint8

// The guard points.
const (
	// GuardInput is the run's input text, checked alongside the first
	// model turn (whose result is discarded if the guard trips).
	GuardInput GuardPoint = 1 << iota
	// GuardToolCall is a tool call before it runs: Text is its JSON
	// arguments (a rewrite must stay a JSON object).
	GuardToolCall
	// GuardToolResult is a tool result before the model sees it, from any
	// source (MCP, skills, A2A, Go tools): Text is one part's text (a text
	// part, a text resource, or a JSON part's JSON).
	GuardToolResult
	// GuardOutput is model text before it is returned or streamed out:
	// the whole text of a turn, or one sentence of it (GuardCheck.Partial)
	// under HoldSentence. A typed answer is checked as its JSON text.
	GuardOutput
	// GuardAll is every point.
	GuardAll = GuardInput | GuardToolCall | GuardToolResult | GuardOutput
)

// String names the point: "input", "tool_call", "tool_result", "output",
// or several joined by "|".
func (p GuardPoint) String() string {
	var names []string
	for _, n := range []struct {
		p    GuardPoint
		name string
	}{{GuardInput, "input"}, {GuardToolCall, "tool_call"}, {GuardToolResult, "tool_result"}, {GuardOutput, "output"}} {
		if p&n.p != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, "|")
}

// GuardCheck is what a guard is asked to check.
type GuardCheck struct {
	// Point is where the text comes from.
	Point GuardPoint
	// Run is the run's id.
	Run string
	// Tool and Source name the tool of a tool call or result.
	Tool   string
	Source Provenance
	// Text is the input, the call's JSON arguments, a result part's text,
	// or model text.
	Text string
	// Partial is set at GuardOutput when Text is a sentence of a streamed
	// turn rather than its whole text.
	Partial bool
}

// GuardAction is a guard's decision.
type GuardAction uint8

// The guard actions. The zero value passes.
const (
	// GuardPass lets the text through unchanged.
	GuardPass GuardAction = iota
	// GuardRewrite replaces the text with Verdict.Text.
	GuardRewrite
	// GuardTrip blocks it: a failure of kind failure.Guardrail.
	GuardTrip
)

// String is "pass", "rewrite" or "trip".
func (a GuardAction) String() string {
	switch a {
	case GuardRewrite:
		return "rewrite"
	case GuardTrip:
		return "trip"
	}
	return "pass"
}

// Verdict is a guard's answer to one check.
type Verdict struct {
	Action GuardAction
	// Text is the replacement of a rewrite.
	Text string
	// Reason says why (model- and person-safe: never the matched secret).
	Reason string
}

// Pass is the verdict that lets the text through.
func Pass() Verdict { return Verdict{} }

// Trip is the verdict that blocks the text, saying why.
func Trip(reason string) Verdict { return Verdict{Action: GuardTrip, Reason: reason} }

// Rewrite is the verdict that replaces the text, saying why.
func Rewrite(text, reason string) Verdict {
	return Verdict{Action: GuardRewrite, Text: text, Reason: reason}
}

// GuardHold is how much of a streamed turn an output guard holds back.
type GuardHold uint8

// The hold modes.
const (
	// HoldTurn holds a turn's text until the turn ends and checks it whole
	// (the default).
	HoldTurn GuardHold = iota
	// HoldSentence releases the text a sentence at a time, each checked
	// as it completes (GuardCheck.Partial).
	HoldSentence
)

// GuardRule applies a Guard at some points (Config.Guards).
type GuardRule struct {
	Guard Guard
	// At is the points the guard applies to (zero: every point).
	At GuardPoint
	// Timeout bounds one check (default 10 s); a check that passes it
	// blocks as a failure.Timeout failure.
	Timeout time.Duration
	// DetectOnly reports trips and rewrites (EventGuard, the log) without
	// blocking or changing anything; the check runs beside the run and is
	// waited for (within Timeout) before the run ends.
	DetectOnly bool
	// Hold is how much of a streamed turn the guard holds back at
	// GuardOutput.
	Hold GuardHold
}

// defaultGuardTimeout bounds a check whose rule sets no Timeout.
const defaultGuardTimeout = 10 * time.Second

// GuardInfo is a guard's verdict in events (EventGuard): which guard, where,
// what it did and why.
type GuardInfo struct {
	Guard  string `json:"guard"`
	Point  string `json:"point"`
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
	Tool   string `json:"tool,omitempty"`
	// DetectOnly is set when the verdict was only reported.
	DetectOnly bool `json:"detect_only,omitempty"`
}

// guardSet is an agent's rules sorted by point.
type guardSet struct {
	input, call, result, output []guardRule
	// sentence is set when an output rule that blocks holds per sentence
	// and none holds the turn.
	sentence bool
	// holds is set when an output rule blocks (the stream is held).
	holds bool
	// detects is set when a rule is detect-only.
	detects bool
	// callLocal and resultLocal are set when the rules at tool calls, or
	// at tool results, are all local and blocking (runLocal).
	callLocal, resultLocal bool
}

// detectSet is a set for the detect-only checks of one text outside a
// run (Guards), nil when no rule is detect-only.
func (gs *guardSet) detectSet() *detectSet {
	if !gs.detects {
		return nil
	}
	return &detectSet{}
}

// guardRule is a rule as a guardSet keeps it: its defaults set, and
// whether its guard is a LocalGuard decided once rather than per check.
type guardRule struct {
	GuardRule
	local bool
}

func newGuardSet(rules []GuardRule) (*guardSet, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	gs := &guardSet{}
	turn := false
	for i, rule := range rules {
		if rule.Guard == nil {
			return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceAgent,
				Message: fmt.Sprintf("agent.Config.Guards[%d] has no Guard", i)}
		}
		r := guardRule{GuardRule: rule}
		_, r.local = rule.Guard.(LocalGuard)
		if r.At == 0 {
			r.At = GuardAll
		}
		if r.Timeout <= 0 {
			r.Timeout = defaultGuardTimeout
		}
		gs.detects = gs.detects || r.DetectOnly
		if r.At&GuardInput != 0 {
			gs.input = append(gs.input, r)
		}
		if r.At&GuardToolCall != 0 {
			gs.call = append(gs.call, r)
		}
		if r.At&GuardToolResult != 0 {
			gs.result = append(gs.result, r)
		}
		if r.At&GuardOutput != 0 {
			gs.output = append(gs.output, r)
			if !r.DetectOnly {
				gs.holds = true
				turn = turn || r.Hold == HoldTurn
			}
		}
	}
	gs.sentence = gs.holds && !turn
	gs.callLocal, gs.resultLocal = allLocal(gs.call), allLocal(gs.result)
	return gs, nil
}

// allLocal reports whether rules are all local and blocking.
func allLocal(rules []guardRule) bool {
	for _, r := range rules {
		if !r.local || r.DetectOnly {
			return false
		}
	}
	return true
}

// guardVerdict is one rule's verdict on one text.
type guardVerdict struct {
	rule *GuardRule
	v    Verdict
	err  *failure.Error // the check failed (timeout, panic, error)
}

// checkOne runs one rule's check under its deadline, recovering a panic.
// A guard that ignores its context is abandoned at the deadline: its
// goroutine ends when Check returns.
func checkOne(ctx context.Context, r *guardRule, cp *GuardCheck) guardVerdict {
	if r.local {
		v, fe := checkLocal(ctx, &r.GuardRule, cp)
		return guardVerdict{rule: &r.GuardRule, v: v, err: fe}
	}
	c := *cp // the goroutine's copy
	cctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	ch := make(chan guardVerdict, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				ch <- guardVerdict{rule: &r.GuardRule, err: panicked(&r.GuardRule, &c, v)}
			}
		}()
		v, err := r.Guard.Check(cctx, c)
		gv := guardVerdict{rule: &r.GuardRule, v: v}
		if err != nil {
			gv.err = checkFailed(&r.GuardRule, &c, err)
		}
		ch <- gv
	}()
	select {
	case gv := <-ch:
		return gv
	case <-cctx.Done():
		if ctx.Err() != nil {
			return guardVerdict{rule: &r.GuardRule, err: failure.From(context.Cause(ctx))}
		}
		return guardVerdict{rule: &r.GuardRule, err: &failure.Error{Kind: failure.Timeout, Source: failure.SourceAgent,
			Name: r.Guard.Name(), Op: "guard", Tool: c.Tool,
			Message: fmt.Sprintf("guard %q did not answer within %s", r.Guard.Name(), r.Timeout)}}
	}
}

// checkLocal runs a LocalGuard's check on the calling goroutine.
func checkLocal(ctx context.Context, r *GuardRule, c *GuardCheck) (v Verdict, fe *failure.Error) {
	defer func() {
		if p := recover(); p != nil {
			v, fe = Verdict{}, panicked(r, c, p)
		}
	}()
	v, err := r.Guard.Check(ctx, *c)
	if err != nil {
		return v, checkFailed(r, c, err)
	}
	return v, nil
}

// panicked is the failure of a check that panicked with v.
func panicked(r *GuardRule, c *GuardCheck, v any) *failure.Error {
	return &failure.Error{Kind: failure.Panic, Source: failure.SourceAgent,
		Name: r.Guard.Name(), Op: "guard", Tool: c.Tool, Err: panicError(v),
		Message: fmt.Sprintf("guard %q crashed", r.Guard.Name())}
}

// checkFailed is the failure of a check that returned err.
func checkFailed(r *GuardRule, c *GuardCheck, err error) *failure.Error {
	fe := *failure.From(err)
	if fe.Kind == failure.Unknown {
		fe.Kind = failure.Internal
	}
	fe.Source, fe.Name, fe.Op, fe.Tool = failure.SourceAgent, r.Guard.Name(), "guard", c.Tool
	if fe.Message == "" {
		fe.Message = fmt.Sprintf("guard %q failed", r.Guard.Name())
	}
	return &fe
}

// guardOutcome is what the rules of one point made of one text.
type guardOutcome struct {
	text string
	// trip is the blocking failure (a trip or a failed check), if any.
	trip *failure.Error
	// infos are the verdicts to report, in rule order.
	infos []GuardInfo
	// detect are the detect-only checks still running.
	detect []<-chan guardVerdict
}

// localRun is what runLocal made of rules: rules[:i] passed, and rule i
// (if any) answered v and err, or panicked with p.
type localRun struct {
	i   int
	v   Verdict
	err error
	p   any
}

// runLocal runs rules that are all local and blocking on c in order, on
// the calling goroutine, until one does not pass: the path of a text that
// every guard passes, kept to a small function so that a run fetches
// little code for it (guardText then goes on from the rule that did not
// pass).
func runLocal(ctx context.Context, rules []guardRule, c *GuardCheck) (lr localRun) {
	defer func() { lr.p = recover() }()
	for lr.i = 0; lr.i < len(rules); lr.i++ {
		lr.v, lr.err = rules[lr.i].Guard.Check(ctx, *c)
		if lr.err != nil || lr.v.Action == GuardRewrite || lr.v.Action == GuardTrip {
			break
		}
	}
	return lr
}

// guardText runs the blocking rules in order (each sees the text the one
// before rewrote) and starts the detect-only ones beside them; with lr,
// the rules up to lr.i have been run already (runLocal), and it goes on
// from lr.i's answer. A local guard is called here, under the one recover
// of the call, and a check that passes costs the call to its guard and
// little more: what is only needed when there is something to report is
// in functions of their own, whose code a run does not fetch when every
// guard passes.
func guardText(ctx context.Context, rules []guardRule, c GuardCheck, lr *localRun) (out guardOutcome) {
	out.text = c.Text
	in := c.Text // c.Text is the text as the rules so far left it
	start := 0
	if lr != nil {
		r := &rules[lr.i]
		var fe *failure.Error
		if lr.p != nil {
			fe = panicked(&r.GuardRule, &c, lr.p)
		} else if lr.err != nil {
			fe = checkFailed(&r.GuardRule, &c, lr.err)
		}
		if out.verdict(r, c, lr.v, fe) {
			return out
		}
		start = lr.i + 1
	}
	checking := -1 // the rule whose local guard is being called
	defer func() {
		if checking < 0 {
			return
		}
		if p := recover(); p != nil {
			out.fail(&rules[checking], c, panicked(&rules[checking].GuardRule, &c, p))
		}
	}()
	for i := start; i < len(rules); i++ {
		r := &rules[i]
		if r.DetectOnly {
			out.detect = append(out.detect, startDetect(ctx, r, c, in))
			continue
		}
		c.Text = out.text
		var v Verdict
		var fe *failure.Error
		if r.local {
			checking = i
			var err error
			v, err = r.Guard.Check(ctx, c)
			checking = -1
			if err != nil {
				fe = checkFailed(&r.GuardRule, &c, err)
			}
		} else {
			gv := checkOne(ctx, r, &c)
			v, fe = gv.v, gv.err
		}
		if fe == nil && v.Action != GuardRewrite && v.Action != GuardTrip {
			continue // a pass (or an action of no meaning, taken as one)
		}
		if out.verdict(r, c, v, fe) {
			return out
		}
	}
	return out
}

// startDetect starts a detect-only rule's check of the text in beside the
// run.
func startDetect(ctx context.Context, r *guardRule, c GuardCheck, in string) <-chan guardVerdict {
	ch := make(chan guardVerdict, 1)
	c.Text = in
	go func() { ch <- checkOne(context.WithoutCancel(ctx), r, &c) }()
	return ch
}

// verdict records a rewrite, a trip or a failed check (fe) of rule r; it
// reports whether the text is blocked.
func (out *guardOutcome) verdict(r *guardRule, c GuardCheck, v Verdict, fe *failure.Error) bool {
	if fe != nil {
		out.fail(r, c, fe)
		return true
	}
	out.infos = append(out.infos, guardVerdict{rule: &r.GuardRule, v: v}.info(c, false))
	switch v.Action {
	case GuardRewrite:
		out.text = v.Text
	case GuardTrip:
		out.trip = tripError(r.Guard.Name(), c, v.Reason)
		return true
	}
	return false
}

// fail records the failed check fe of rule r, which blocks the text.
func (out *guardOutcome) fail(r *guardRule, c GuardCheck, fe *failure.Error) {
	out.trip = fe
	out.infos = append(out.infos, guardVerdict{rule: &r.GuardRule, err: fe}.info(c, false))
}

// info is the event form of a verdict.
func (gv guardVerdict) info(c GuardCheck, detect bool) GuardInfo {
	gi := GuardInfo{Guard: gv.rule.Guard.Name(), Point: c.Point.String(), Action: gv.v.Action.String(),
		Reason: gv.v.Reason, Tool: c.Tool, DetectOnly: detect}
	if gv.err != nil {
		gi.Action, gi.Reason = "trip", gv.err.Kind.String()+": "+gv.err.Message
	}
	return gi
}

// reported reports whether a verdict is worth an event.
func (gv guardVerdict) reported() bool { return gv.err != nil || gv.v.Action != GuardPass }

// tripError is the failure of a trip.
func tripError(guard string, c GuardCheck, reason string) *failure.Error {
	if reason == "" {
		reason = "no reason given"
	}
	what := map[GuardPoint]string{GuardInput: "the input", GuardToolCall: "the tool call",
		GuardToolResult: "the tool result", GuardOutput: "the answer"}[c.Point]
	return &failure.Error{Kind: failure.Guardrail, Source: failure.SourceAgent, Name: guard, Tool: c.Tool,
		Op: c.Point.String(), Message: fmt.Sprintf("guard %q blocked %s: %s", guard, what, reason)}
}

// detectSet collects a run's detect-only checks; the run's goroutine
// reports the finished ones at its next event and waits for all before the
// run ends. Its methods may be called from any goroutine.
type detectSet struct {
	mu      sync.Mutex
	pending []pendingDetect
	// n is len(pending), read without the lock by take: a run without
	// detect-only checks pending takes nothing without locking.
	n atomic.Int32
}

type pendingDetect struct {
	c  GuardCheck
	ch <-chan guardVerdict
}

// add adds the checks chs of c; d may be nil when chs is empty.
func (d *detectSet) add(c GuardCheck, chs []<-chan guardVerdict) {
	if len(chs) == 0 {
		return
	}
	d.mu.Lock()
	for _, ch := range chs {
		d.pending = append(d.pending, pendingDetect{c: c, ch: ch})
	}
	d.n.Store(int32(len(d.pending)))
	d.mu.Unlock()
}

// take returns the finished checks' reports (every check's when wait is
// set, each bounded by its rule's Timeout). A nil set has none.
func (d *detectSet) take(wait bool) []GuardInfo {
	if d == nil || d.n.Load() == 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var infos []GuardInfo
	keep := d.pending[:0]
	for _, p := range d.pending {
		var gv guardVerdict
		if wait {
			gv = <-p.ch
		} else {
			select {
			case gv = <-p.ch:
			default:
				keep = append(keep, p)
				continue
			}
		}
		if gv.reported() {
			infos = append(infos, gv.info(p.c, true))
		}
	}
	clear(d.pending[len(keep):])
	d.pending = keep
	d.n.Store(int32(len(keep)))
	return infos
}

// emitGuards emits the verdicts as EventGuard events and span events.
func (r *run) emitGuards(ctx context.Context, turn int, call *CallInfo, infos []GuardInfo) {
	if len(infos) == 0 {
		return
	}
	span := trace.SpanFromContext(ctx)
	for i := range infos {
		gi := infos[i]
		if span.IsRecording() {
			span.AddEvent("guard", trace.WithAttributes(attribute.String("guard.name", gi.Guard),
				attribute.String("guard.point", gi.Point), attribute.String("guard.action", gi.Action),
				attribute.String("guard.reason", gi.Reason), attribute.Bool("guard.detect_only", gi.DetectOnly)))
		}
		ev := r.a.log.Info()
		if gi.Action == "trip" {
			ev = r.a.log.Warn()
		}
		ev.Str("run", r.id).Str("guard", gi.Guard).Str("point", gi.Point).Str("action", gi.Action).
			Str("tool", gi.Tool).Bool("detect_only", gi.DetectOnly).Str("reason", gi.Reason).Msg("guard")
		r.emit(Event{Type: EventGuard, Turn: turn, Call: call, Guard: &gi})
	}
}

// flushDetect reports the detect-only checks that finished (all of them,
// waiting, when wait is set).
func (r *run) flushDetect(wait bool) {
	if r.a.guardrails == nil && !r.s.grants.guarding.Load() {
		return
	}
	r.emitGuards(r.ctx, r.ans.Turns, nil, r.detect.take(wait))
}

// guardArgs applies the tool-call rules to a call's arguments; it returns
// the arguments to run with (args itself when no rule rewrote them), or the
// blocking failure.
func guardArgs(ctx context.Context, detect *detectSet, gs *guardSet, c GuardCheck, args json.RawMessage, infos *[]GuardInfo) (json.RawMessage, *failure.Error) {
	c.Text = string(args)
	text, trip := guardPoint(ctx, detect, gs.call, gs.callLocal, c, infos)
	if trip != nil {
		return nil, trip
	}
	if text == c.Text {
		return args, nil
	}
	return rewrittenArgs(c, text)
}

// guardPoint applies rules to c.Text (local: every rule is local and
// blocking, see runLocal): it returns the text as the rules left it, or
// the blocking failure, and records the detect-only checks it started and
// the verdicts to report.
func guardPoint(ctx context.Context, detect *detectSet, rules []guardRule, local bool, c GuardCheck, infos *[]GuardInfo) (string, *failure.Error) {
	var out guardOutcome
	if local {
		lr := runLocal(ctx, rules, &c)
		if lr.i == len(rules) {
			return c.Text, nil
		}
		out = guardText(ctx, rules, c, &lr)
	} else {
		out = guardText(ctx, rules, c, nil)
	}
	if len(out.detect) > 0 || len(out.infos) > 0 {
		detect.add(c, out.detect)
		*infos = append(*infos, out.infos...)
	}
	return out.text, out.trip
}

// rewrittenArgs is the arguments a guard rewrote, if still a JSON object.
func rewrittenArgs(c GuardCheck, text string) (json.RawMessage, *failure.Error) {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &obj) != nil || obj == nil {
		return nil, &failure.Error{Kind: failure.Internal, Source: failure.SourceAgent, Tool: c.Tool, Op: "guard",
			Message: "a guard rewrote the call's arguments into something that is not a JSON object"}
	}
	return json.RawMessage(text), nil
}

// guardResult applies the tool-result rules to each text-bearing part of a
// result; it returns the result the model sees, or the blocking failure.
func guardResult(ctx context.Context, detect *detectSet, gs *guardSet, c GuardCheck, res *Result, infos *[]GuardInfo) (*Result, *failure.Error) {
	var parts []Part
	for i := range res.Parts {
		p := &res.Parts[i]
		var text string
		switch p.Type {
		case PartText, PartResource:
			if p.Type == PartResource && p.Data != nil {
				continue
			}
			text = p.Text
		case PartJSON:
			text = string(p.JSON)
		default:
			continue
		}
		c.Text = text
		out, trip := guardPoint(ctx, detect, gs.result, gs.resultLocal, c, infos)
		if trip != nil {
			return nil, trip
		}
		if out != text {
			parts = rewritePart(parts, res, i, out)
		}
	}
	if parts == nil {
		return res, nil
	}
	cp := *res
	cp.Parts = parts
	return &cp, nil
}

// rewritePart is parts (a copy of res.Parts, made on the first rewrite)
// with part i's text replaced by text: a JSON part stays one if text is
// JSON, else it becomes a text part.
func rewritePart(parts []Part, res *Result, i int, text string) []Part {
	if parts == nil {
		parts = append([]Part(nil), res.Parts...)
	}
	if parts[i].Type == PartJSON {
		if json.Valid([]byte(text)) {
			parts[i].JSON = json.RawMessage(text)
		} else {
			parts[i] = Part{Type: PartText, Text: text}
		}
	} else {
		parts[i].Text = text
	}
	return parts
}

// inputGuard is the input rules' check of a run, running beside its first
// model turn.
type inputGuard struct {
	in   string
	done chan struct{}
	out  guardOutcome
}

// startInput starts the input rules on input, on a goroutine the run
// waits for (wait) before its first turn's result is used.
func (r *run) startInput(input string) *inputGuard {
	gs := r.a.guardrails
	if gs == nil || len(gs.input) == 0 {
		return nil
	}
	g := &inputGuard{in: input, done: make(chan struct{})}
	c := GuardCheck{Point: GuardInput, Run: r.id, Text: input}
	go func() {
		defer close(g.done)
		g.out = guardText(r.ctx, gs.input, c, nil)
		r.detect.add(c, g.out.detect)
	}()
	return g
}

// errGuardTripped cancels a model turn whose input guard tripped.
var errGuardTripped = errors.New("agent: an input guard tripped")

// outGate holds back a turn's streamed text as far as the output rules
// need, checks it, and emits what passes.
type outGate struct {
	r    *run
	turn int
	buf  strings.Builder
	// out is the checked text of the turn, as emitted.
	out strings.Builder
	// held is set while the input guard runs: nothing is released.
	held bool
	// changed is set when a guard rewrote some of the text.
	changed bool
	trip    *failure.Error
	seen    bool
}

// add takes a delta.
func (g *outGate) add(d string) {
	g.seen = true
	gs := g.r.a.guardrails
	if gs == nil || !gs.holds {
		if g.held {
			g.buf.WriteString(d)
			return
		}
		g.out.WriteString(d)
		g.r.emit(Event{Type: EventModelText, Text: d})
		return
	}
	g.buf.WriteString(d)
	g.release(false)
}

// release checks and emits what may go out: complete sentences under
// HoldSentence, everything at the end of the turn (end).
func (g *outGate) release(end bool) {
	if g.held || g.trip != nil {
		return
	}
	gs := g.r.a.guardrails
	if gs == nil || !gs.holds {
		if g.buf.Len() > 0 {
			s := g.buf.String()
			g.buf.Reset()
			g.out.WriteString(s)
			g.r.emit(Event{Type: EventModelText, Text: s})
		}
		return
	}
	s := g.buf.String()
	cut := len(s)
	if !end {
		if !gs.sentence {
			return
		}
		cut = sentenceEnd(s)
		if cut == 0 {
			return
		}
	}
	chunk := s[:cut]
	g.buf.Reset()
	g.buf.WriteString(s[cut:])
	if chunk == "" {
		return
	}
	c := GuardCheck{Point: GuardOutput, Run: g.r.id, Text: chunk, Partial: gs.sentence}
	out := guardText(g.r.ctx, gs.output, c, nil)
	g.r.detect.add(c, out.detect)
	g.r.emitGuards(g.r.ctx, g.turn, nil, out.infos)
	if out.trip != nil {
		g.trip = out.trip
		return
	}
	if out.text != chunk {
		g.changed = true
	}
	g.out.WriteString(out.text)
	if out.text != "" {
		g.r.emit(Event{Type: EventModelText, Text: out.text})
	}
}

// finish ends the turn: text is the turn's whole text (used when the model
// streamed none). It returns the checked text and whether it differs from
// text, or the trip.
func (g *outGate) finish(text string) (string, bool, *failure.Error) {
	if !g.seen && text != "" {
		gs := g.r.a.guardrails
		if gs != nil && gs.holds {
			g.buf.WriteString(text)
		}
	}
	g.release(true)
	if g.trip != nil {
		return "", false, g.trip
	}
	if gs := g.r.a.guardrails; gs != nil && !gs.holds && len(gs.output) > 0 && text != "" {
		// Only detect-only rules: they see the whole turn, beside the run.
		c := GuardCheck{Point: GuardOutput, Run: g.r.id, Text: text}
		g.r.detect.add(c, guardText(g.r.ctx, gs.output, c, nil).detect)
	}
	if !g.seen {
		gs := g.r.a.guardrails
		if gs == nil || !gs.holds {
			return text, false, nil
		}
	}
	return g.out.String(), g.changed, nil
}

// sentenceEnd is the length of s up to its last complete sentence: after
// the last '.', '!', '?' or line break followed by a space or line break.
func sentenceEnd(s string) int {
	for i := len(s) - 2; i >= 0; i-- {
		switch s[i] {
		case '.', '!', '?', '\n':
			if n := s[i+1]; n == ' ' || n == '\n' || n == '\t' {
				return i + 2
			}
		}
	}
	return 0
}

// Guards applies guard rules outside a run: a server fronting tools
// (mcp/server's Config.Guards) checks each call and result through it, as
// an agent does at GuardToolCall and GuardToolResult. Detect-only rules
// are waited for (within their deadlines) and only reported.
type Guards struct{ set *guardSet }

// NewGuards returns the rules ready to apply; a rule without a Guard is a
// Config failure.
func NewGuards(rules []GuardRule) (*Guards, error) {
	gs, err := newGuardSet(rules)
	if err != nil || gs == nil {
		return nil, err
	}
	return &Guards{set: gs}, nil
}

// Call checks a call's JSON arguments (c.Point is GuardToolCall); it returns
// the arguments to run with and the verdicts to report, or the blocking
// failure (kind failure.Guardrail for a trip).
func (g *Guards) Call(ctx context.Context, c GuardCheck, args json.RawMessage) (json.RawMessage, []GuardInfo, error) {
	if g == nil || len(g.set.call) == 0 {
		return args, nil, nil
	}
	c.Point = GuardToolCall
	var infos []GuardInfo
	detect := g.set.detectSet()
	out, fe := guardArgs(ctx, detect, g.set, c, args, &infos)
	infos = append(infos, detect.take(true)...)
	if fe != nil {
		return nil, infos, fe
	}
	return out, infos, nil
}

// Result checks each text-bearing part of a result (c.Point is
// GuardToolResult); it returns the result to pass on and the verdicts to
// report, or the blocking failure.
func (g *Guards) Result(ctx context.Context, c GuardCheck, res *Result) (*Result, []GuardInfo, error) {
	if g == nil || len(g.set.result) == 0 || res == nil {
		return res, nil, nil
	}
	c.Point = GuardToolResult
	var infos []GuardInfo
	detect := g.set.detectSet()
	out, fe := guardResult(ctx, detect, g.set, c, res, &infos)
	infos = append(infos, detect.take(true)...)
	if fe != nil {
		return nil, infos, fe
	}
	return out, infos, nil
}
