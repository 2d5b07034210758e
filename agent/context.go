package agent

import (
	"fmt"
	"sync"

	"github.com/switchboard-dev/switchboard/agent/internal/tokens"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// ContextConfig sets how the agent keeps its requests inside the model's
// context window (docs/context.md). The zero value is the default: tools are
// deferred behind a search tool once their definitions pass 10% of the
// window, and the prompt is compacted once it passes 80%.
type ContextConfig struct {
	// Window is the model's context window in tokens (0: the model's
	// llm.Capabilities.ContextWindow if it tells one, else the window known for its
	// name, else 128,000).
	Window int
	// DeferShare is the share of the window the tool definitions may take
	// before tools are deferred behind a search tool (default 0.10; a
	// negative value never defers).
	DeferShare float64
	// Pinned names the tools that stay defined when tools are deferred: exact
	// names, or prefixes ending in "*" ("mcp__files__*").
	Pinned []string
	// ProviderSearch, with a model whose provider has its own tool search
	// (Anthropic's), defers tools to it instead of the agent's search
	// tool: every tool is sent, the deferred ones marked so, and the
	// provider finds them for the model. Ignored for other models.
	ProviderSearch bool
	// CompactShare is the share of the window the estimated prompt may take
	// before old turns are compacted (default 0.80, at most 0.82: a prompt
	// that may pass the window by the estimate's error bound is never sent;
	// a negative value never compacts). Compaction brings the prompt down to
	// about half the window.
	CompactShare float64
	// KeepRecent is the number of most recent messages compaction leaves as
	// they are (default 6; fewer when they alone are too big).
	KeepRecent int
	// Summarizer writes the summaries of compacted turns (nil: the agent's
	// model, asked with llm.Request.Compaction set). The bus's Sampler()
	// sends them to whoever serves sampling; bus.NewModelSampler (or any
	// Sample method) puts another model there.
	Summarizer Sampler
}

// ContextInfo is the prompt of one model turn, reported on its
// EventTurnStarted, in estimated tokens
// (agent/internal/tokens: within 22% of OpenAI's tokenizers on its corpus;
// scaled up by the provider's reported usage when that was higher).
type ContextInfo struct {
	// Window is the model's context window.
	Window int `json:"window"`
	// Prompt is the whole request: the sum of the parts below.
	Prompt int `json:"prompt"`
	// System is the agent's instructions and notes; Skills the skills
	// catalog (the text of toolsets with an Instructions method); Tools the tool definitions
	// sent; History the messages (and any summary) without tool results;
	// ToolResults the tool results.
	System      int `json:"system"`
	Skills      int `json:"skills"`
	Tools       int `json:"tools"`
	History     int `json:"history"`
	ToolResults int `json:"tool_results"`
	// ToolsDefined and ToolsDeferred count the tools sent and those behind
	// the search tool.
	ToolsDefined  int `json:"tools_defined"`
	ToolsDeferred int `json:"tools_deferred,omitempty"`
	// Compacted is set when compaction ran before this turn.
	Compacted *Compaction `json:"compacted,omitempty"`
}

// Compaction says what one compaction did. The session's History keeps
// every message: only the prompt is compacted.
type Compaction struct {
	// Before is the prompt's estimate before compaction.
	Before int `json:"before"`
	// Summarized is the number of history messages folded into the summary
	// this time (the summary stands for the history's first messages, up to
	// the kept tail); Elided the number of old tool results replaced by a
	// short note this time.
	Summarized int `json:"summarized,omitempty"`
	Elided     int `json:"elided,omitempty"`
	// Note says what happened in words (a failed summary, the loop guard).
	Note string `json:"note,omitempty"`
	// Usage and Cost are the summary request's, when one was answered
	// (they count in the run's Answer.Usage and Answer.Cost, and its
	// budget).
	Usage *llm.Usage `json:"usage,omitempty"`
	Cost  *llm.Cost  `json:"cost,omitempty"`
}

// Context defaults.
const (
	defaultDeferShare   = 0.10
	defaultCompactShare = 0.80
	defaultKeepRecent   = 6
	// compactTarget is the share of the window a compaction aims for.
	compactTarget = 0.50
	// maxCompactStreak is how many turns in a row may compact before the
	// loop guard stops compacting for the rest of the run.
	maxCompactStreak = 3
	// defOverhead is the tokens a provider adds around each tool
	// definition and each message.
	defOverhead = 8
	msgOverhead = 4
)

// ctxState is a session's context economy state: what it keeps between
// turns and runs. Runs of a session do not overlap; mu guards what the
// search tool changes from a call's goroutine.
type ctxState struct {
	mu sync.Mutex
	// loaded are the deferred tools loaded (found or called), in order.
	loaded    []string
	loadedSet map[string]bool
	// summary stands for history[:upto]; results of history[:elideBefore]
	// bigger than elideBytes go to the model as a note.
	summary     string
	upto        int
	elideBefore int
	// tok caches the estimates of history[i] (messages do not change).
	tok []msgTok
	// scale (>= 1) corrects the estimate by the provider's reported usage.
	scale float64
}

// ctxRun is a run's view of the context economy.
type ctxRun struct {
	r      *run
	st     *ctxState
	window int
	// known is set when the window is not the default guess: only then is
	// a prompt that cannot fit refused before it is sent.
	known bool
	// skillsText is the Instructions text of the system prompt (the rest is
	// the system part).
	skillsTok int
	systemTok int
	// streak counts consecutive turns that compacted; guard is set once
	// the loop guard tripped.
	streak int
	guard  bool
	// deferring is set for a turn whose tools are deferred; search is the
	// search tool then.
	deferring bool
	search    *searchTool
	lastEst   int
	// parts is the run's rule for media parts (partRule) and media the
	// provider's rule for counting their tokens.
	parts *partRule
	media tokens.Rule
}

// window resolves the context window of the agent's model, and whether it
// is known (configured, told by the model or known for its name) rather
// than the default guess.
func (a *Agent) window() (int, bool) {
	if w := a.cfg.Context.Window; w > 0 {
		return w, true
	}
	if w := llm.CapabilitiesOf(a.cfg.Model).ContextWindow; w > 0 {
		return w, true
	}
	if w := tokens.Window(a.cfg.Model.Name()); w > 0 {
		return w, true
	}
	return tokens.DefaultWindow, false
}

// contextDefaults fills the zero fields of c.
func contextDefaults(c *ContextConfig) {
	if c.DeferShare == 0 {
		c.DeferShare = defaultDeferShare
	}
	if c.CompactShare == 0 {
		c.CompactShare = defaultCompactShare
	}
	if c.KeepRecent <= 0 {
		c.KeepRecent = defaultKeepRecent
	}
}

// newCtxRun starts the run's context economy (after the system prompt was
// built).
func (r *run) newCtxRun(skillsText string) {
	st := &r.s.cx
	if st.scale < 1 {
		st.scale = 1
	}
	pr := r.a.partRule()
	r.cx = &ctxRun{r: r, st: st, skillsTok: tokens.Count(skillsText), parts: &pr, media: tokens.RuleFor(r.a.cfg.Model.Name())}
	r.cx.window, r.cx.known = r.a.window()
	r.cx.systemTok = tokens.Count(r.system) - r.cx.skillsTok
}

// prepare returns the prompt and tools of a turn, and their breakdown for
// EventTurnStarted: tools deferred behind the search tool when their
// definitions are too big, the history compacted when the prompt is. An
// error ends the run (the prompt cannot fit the window).
func (r *run) prepare(hist []llm.Message, all []llm.ToolDef) ([]llm.Message, []llm.ToolDef, *ContextInfo, error) {
	cx := r.cx
	defs, deferred := cx.selectTools(all)
	toolTok := 0
	if len(all) > 0 && len(defs) == len(all) && &defs[0] == &all[0] {
		toolTok = r.a.deferIndexFor(all).tokens
	} else {
		toolTok = defsTokens(defs)
	}
	msgs, info, comp := cx.compact(hist, toolTok)
	info.Window, info.Tools = cx.window, cx.scaled(toolTok)
	info.ToolsDefined, info.ToolsDeferred = len(defs), deferred
	for i := range defs {
		if defs[i].Deferred { // sent, for the provider's own search
			info.ToolsDefined--
		}
	}
	info.Compacted = comp
	msgs = cx.parts.fitParts(msgs)
	info.Prompt = info.System + info.Skills + info.Tools + info.History + info.ToolResults
	cx.lastEst = info.Prompt
	// The estimate may be low by its error bound: a prompt that could
	// pass a known window is not sent (with a guessed one the provider
	// decides).
	if cx.known && float64(info.Prompt)*(1+tokens.ErrorBound) > float64(cx.window) {
		return nil, nil, info, &failure.Error{Kind: failure.Budget, Source: failure.SourceAgent,
			Message: fmt.Sprintf("the prompt (about %d tokens) does not fit the model's context window of %d tokens, even compacted", info.Prompt, cx.window)}
	}
	return msgs, defs, info, nil
}

// observe corrects the estimate by the provider's reported input tokens:
// only upwards (a provider that reports less, or nothing, leaves it).
func (r *run) observe(u llm.Usage) {
	cx := r.cx
	if u.InputTokens <= 0 || cx.lastEst <= 0 {
		return
	}
	est := float64(cx.lastEst) / cx.st.scale
	if s := float64(u.InputTokens) / est; s > cx.st.scale {
		cx.st.scale = min(s, 2)
	}
}

func (cx *ctxRun) scaled(n int) int { return int(float64(n)*cx.st.scale + 0.5) }

// defsTokens estimates tool definitions.
func defsTokens(defs []llm.ToolDef) int {
	n := 0
	for _, d := range defs {
		if d.Deferred {
			continue // not in the model's context until found
		}
		n += defOverhead + tokens.Count(d.Name) + tokens.Count(d.Description) + tokens.Count(string(d.Schema))
	}
	return n
}

// msgTok is the estimate of one message: its text and calls, its tool
// results, and its tool results as sent once old ones are elided; sig
// tells the message it was made for from another at the same place.
type msgTok struct{ hist, results, elided, sig int }

// signature is a cheap fingerprint of a message: its role, sizes and
// counts (a history cut by a failed run and grown again is measured anew).
func signature(m *llm.Message) int {
	n := len(m.Role) + len(m.Text)<<8 + len(m.ToolCalls)<<40 + len(m.ToolResults)<<48 + len(m.Parts)<<56
	for _, r := range m.ToolResults {
		n += len(r.Content)<<4 + len(r.Parts)<<32
	}
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Args)<<2
	}
	return n
}

// measure estimates a message, its parts by parts.
func measure(m *llm.Message, parts func([]llm.Part) int) msgTok {
	t := msgTok{hist: msgOverhead + tokens.Count(m.Text) + parts(m.Parts), sig: signature(m)}
	for _, c := range m.ToolCalls {
		t.hist += defOverhead + tokens.Count(c.Name) + tokens.Count(string(c.Args))
	}
	for _, tr := range m.ToolResults {
		n := defOverhead + tokens.Count(tr.Content) + parts(tr.Parts)
		t.results += n
		if elides(tr) {
			n = defOverhead + tokens.Count(elisionNote(tr))
		}
		t.elided += n
	}
	return t
}
