package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/agent/internal/toolsearch"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// searchToolName is the tool that finds deferred tools (llm's scripted
// SearchAndCall uses the same name).
const searchToolName = "search_tools"

const (
	searchDefaultLimit = 5
	searchMaxLimit     = 20
	searchDescBytes    = 400
)

const searchToolDesc = "Search the tools that are not defined yet: this agent has more tools than fit its context, " +
	"so most are found by searching. Describe what you want to do (words from a tool's name, purpose or parameters); " +
	"give several queries at once for several steps, or a server's name to list its tools. " +
	"The tools found are defined from your next turn; a tool can also be called directly by its exact name."

var searchToolSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"query":{"type":"string","minLength":1,"maxLength":1000,"description":"what the tool should do"},` +
	`"queries":{"type":"array","maxItems":8,"items":{"type":"string","minLength":1,"maxLength":1000},"description":"several searches at once, one per step of the task"},` +
	`"server":{"type":"string","maxLength":200,"description":"list this MCP server's tools"},` +
	`"limit":{"type":"integer","minimum":1,"maximum":20,"description":"how many tools to return for each query (default 5)"}},` +
	`"additionalProperties":false}`)

// deferIndex is the search index of one tool snapshot's definitions (the
// snapshot's defs slice identifies it), and their estimated tokens. It is
// shared by the agent's runs.
type deferIndex struct {
	first  *llm.ToolDef
	n      int
	tokens int
	pos    map[string]int
	// ix is built by the first search.
	once sync.Once
	all  []llm.ToolDef
	ix   *ToolIndex
}

// index returns the search index, building it on first use from the
// specs of tools (the turn's tools by name) and the instructions of the
// agent's toolsets' servers; with Config.Embedder it ranks by meaning
// too, with the agent's vector cache.
func (di *deferIndex) index(a *Agent, tools map[string]Tool) *ToolIndex {
	di.once.Do(func() {
		specs := make([]ToolSpec, len(di.all))
		for i, d := range di.all {
			if t := tools[d.Name]; t != nil {
				specs[i] = t.Spec()
			} else {
				specs[i] = ToolSpec{Name: d.Name, Description: d.Description, InputSchema: d.Schema}
			}
		}
		di.ix = NewToolIndex(specs, a.serverInstructions())
		if a.cfg.Embedder != nil {
			di.ix = di.ix.withVectors(a.cfg.Embedder, &a.vectors, &a.log).WithVectorStore(a.cfg.Vectors)
		}
	})
	return di.ix
}

// serverInstructions are the instructions of the servers of the agent's
// toolsets that have the optional ServerInstructions method (see
// Toolset), by server name; the first toolset to name a server gives its.
func (a *Agent) serverInstructions() map[string]string {
	var out map[string]string
	for _, ts := range a.toolsets {
		si, ok := ts.(serverInstructor)
		if !ok {
			continue
		}
		for name, text := range si.ServerInstructions() {
			if out == nil {
				out = map[string]string{}
			}
			if _, dup := out[name]; !dup {
				out[name] = text
			}
		}
	}
	return out
}

// deferIndexFor returns the index of all, built once per tool snapshot.
func (a *Agent) deferIndexFor(all []llm.ToolDef) *deferIndex {
	if di := a.deferIx.Load(); di != nil && di.n == len(all) && di.first == &all[0] {
		return di
	}
	di := &deferIndex{first: &all[0], n: len(all), tokens: defsTokens(all), pos: make(map[string]int, len(all)), all: all}
	for i, d := range all {
		di.pos[d.Name] = i
	}
	a.deferIx.Store(di)
	return di
}

// selectTools returns the turn's tool definitions: all of them, or, when
// they pass the deferral share of the window, the search tool, the pinned
// tools (in listing order) and the tools loaded so far (in load order, so
// the prompt's prefix stays the same for providers' caches). It also
// returns how many tools are deferred.
func (cx *ctxRun) selectTools(all []llm.ToolDef) ([]llm.ToolDef, int) {
	cfg := cx.r.a.cfg.Context
	cx.deferring, cx.search = false, nil
	if cfg.DeferShare < 0 || len(all) == 0 {
		return all, 0
	}
	di := cx.r.a.deferIndexFor(all)
	if float64(cx.scaled(di.tokens)) <= cfg.DeferShare*float64(cx.window) {
		return all, 0
	}
	if _, taken := di.pos[searchToolName]; taken {
		return all, 0 // a tool of the agent's has the name: no deferral
	}
	if cfg.ProviderSearch && providerSearches(cx.r.a.cfg.Model) {
		return cx.providerDefs(all)
	}
	cx.deferring = true
	cx.search = &searchTool{cx: cx, di: di, all: all, tools: cx.r.index}
	defs := []llm.ToolDef{{Name: searchToolName, Description: searchToolDesc, Schema: searchToolSchema}}
	for _, d := range all {
		if cx.pinned(d.Name) {
			defs = append(defs, d)
		}
	}
	defs = append(defs, cx.loadedDefs(di, all, int(cfg.DeferShare*float64(cx.window))-cx.scaled(defsTokens(defs)))...)
	return defs, len(all) - (len(defs) - 1)
}

// loadedDefs are the definitions of the loaded tools, in load order. When
// they pass budget tokens the oldest are unloaded (a call by name, or a
// search, loads them again), so loading cannot grow the prompt without
// bound.
func (cx *ctxRun) loadedDefs(di *deferIndex, all []llm.ToolDef, budget int) []llm.ToolDef {
	st := cx.st
	st.mu.Lock()
	defer st.mu.Unlock()
	first, size := len(st.loaded), 0
	for first > 0 {
		i, ok := di.pos[st.loaded[first-1]]
		if !ok {
			first-- // no longer listed: kept, defined again if it comes back
			continue
		}
		n := cx.scaled(defsTokens(all[i : i+1]))
		if size+n > budget {
			break
		}
		size += n
		first--
	}
	for _, n := range st.loaded[:first] {
		delete(st.loadedSet, n)
	}
	st.loaded = append(st.loaded[:0], st.loaded[first:]...)
	var defs []llm.ToolDef
	for _, n := range st.loaded {
		if i, ok := di.pos[n]; ok && !cx.pinned(n) {
			defs = append(defs, all[i])
		}
	}
	return defs
}

// pinned reports whether a tool stays defined when tools are deferred:
// named by Context.Pinned, or a handoff tool.
func (cx *ctxRun) pinned(name string) bool {
	for _, p := range cx.r.a.cfg.Context.Pinned {
		if p == name || (strings.HasSuffix(p, "*") && strings.HasPrefix(name, p[:len(p)-1])) {
			return true
		}
	}
	if t := cx.r.index[name]; t != nil && t.Spec().Source.Kind == failure.SourceHandoff {
		return true
	}
	return false
}

// load defines a deferred tool from the next turn on.
func (cx *ctxRun) load(name string) {
	if cx.pinned(name) {
		return
	}
	st := cx.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.loadedSet == nil {
		st.loadedSet = map[string]bool{}
	}
	if !st.loadedSet[name] {
		st.loadedSet[name] = true
		st.loaded = append(st.loaded, name)
	}
}

// lookupTool finds the tool a call names: any tool of the turn's index (a
// deferred tool called by its exact name is loaded and runs), or the
// search tool while tools are deferred.
func (r *run) lookupTool(name string) Tool {
	cx := r.cx
	if t := r.index[name]; t != nil {
		if cx != nil && cx.deferring {
			cx.load(name)
		}
		return t
	}
	if cx != nil && cx.deferring && name == searchToolName {
		return cx.search
	}
	return nil
}

// searchTool is the tool that searches the deferred tools.
type searchTool struct {
	cx  *ctxRun
	di  *deferIndex
	all []llm.ToolDef
	// tools are the turn's tools by name, whose specs are indexed.
	tools map[string]Tool
}

func (t *searchTool) Spec() ToolSpec {
	return ToolSpec{Name: searchToolName, Description: searchToolDesc, InputSchema: searchToolSchema, ReadOnly: true,
		Source: Provenance{Kind: failure.SourceAgent, Name: "tool search"}}
}

// foundTool is one tool in the search tool's answer.
type foundTool struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Parameters  []string `json:"parameters,omitempty"`
	Why         string   `json:"why,omitempty"`
}

// searchMaxQueries bounds the queries of one search_tools call.
const searchMaxQueries = 8

func (t *searchTool) Call(ctx context.Context, args json.RawMessage) (*Result, error) {
	var in struct {
		Query   string   `json:"query"`
		Queries []string `json:"queries"`
		Server  string   `json:"server"`
		Limit   int      `json:"limit"`
	}
	bad := &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceAgent, Tool: searchToolName,
		Message: `search_tools needs {"query": "<what the tool should do>"}, {"queries": [...]} (at most 8) or {"server": "<name>"}`}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, bad
	}
	var queries []string
	for _, q := range append([]string{in.Query}, in.Queries...) {
		if strings.TrimSpace(q) != "" {
			queries = append(queries, q)
		}
	}
	if (len(queries) == 0 && strings.TrimSpace(in.Server) == "") || len(queries) > searchMaxQueries {
		return nil, bad
	}
	limit := in.Limit
	if limit <= 0 {
		limit = searchDefaultLimit
	}
	limit = min(limit, searchMaxLimit)
	out := struct {
		Tools []foundTool `json:"tools"`
		Note  string      `json:"note"`
	}{Tools: []foundTool{}}
	seen := map[string]bool{}
	add := func(name, reason string) {
		if seen[name] {
			return
		}
		i, ok := t.di.pos[name]
		if !ok {
			return
		}
		seen[name] = true
		d := t.all[i]
		t.cx.load(d.Name)
		f := foundTool{Name: d.Name, Description: clip(d.Description, searchDescBytes), Why: reason}
		if p := toolsearch.ParamNames(d.Schema); p != "" {
			f.Parameters = strings.Fields(p)
		}
		out.Tools = append(out.Tools, f)
	}
	ix := t.di.index(t.cx.r.a, t.tools)
	if s := strings.TrimSpace(in.Server); s != "" {
		for _, n := range ix.Server(s) {
			if len(out.Tools) >= searchMaxLimit {
				break
			}
			add(n, "a tool of "+s)
		}
	}
	for _, q := range queries {
		for _, m := range ix.SearchContext(ctx, q, limit) {
			add(m.Name, m.Why)
		}
	}
	out.Note = "These tools are defined from your next turn: call them by name then."
	if len(out.Tools) == 0 {
		out.Note = "No tool matched; try other words."
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return TextResult(string(b)), nil
}
