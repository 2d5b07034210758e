package agent

import (
	"fmt"
	"slices"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// toolSnapshot is a built tool index and its model definitions, with what
// they were built from: each toolset's listing (toolsets return the same
// slice until their list changes) and the availability of each source. It
// is immutable once stored, so concurrent runs share it.
type toolSnapshot struct {
	lists [][]Tool
	keys  []failure.Key
	avail []bool
	index map[string]Tool
	// owner names the toolset of each tool of index.
	owner map[string]string
	defs  []llm.ToolDef
}

// current reports whether the snapshot still describes lists under p.
func (s *toolSnapshot) current(lists [][]Tool, p failure.Policy) bool {
	if s == nil || len(s.lists) != len(lists) {
		return false
	}
	for i, l := range lists {
		o := s.lists[i]
		if len(o) != len(l) || (len(l) > 0 && &o[0] != &l[0]) {
			return false
		}
	}
	for i, k := range s.keys {
		if p.Available(k) != s.avail[i] {
			return false
		}
	}
	return true
}

// gatherTools lists every toolset and returns the model's tool definitions
// for the turn, setting the turn's tool index. A toolset that fails to list
// keeps its last good list. While no toolset's list and no source's
// availability changed, the index and definitions built last (by any run)
// are reused; building them reports a duplicate name (the first tool is
// kept) and marks the tools of sources whose circuit is open.
func (r *run) gatherTools() []llm.ToolDef {
	if r.lists == nil {
		r.lists = make([][]Tool, len(r.a.toolsets))
	}
	for i, ts := range r.a.toolsets {
		if cn, ok := ts.(changeNotifier); ok {
			select {
			case <-cn.Changed():
				r.emit(Event{Type: EventToolsChanged, Toolset: ts.Name()})
			default:
			}
		}
		tools, err := ts.Tools(r.ctx)
		if err != nil {
			r.survive(&failure.Error{Kind: failure.KindOf(err), Source: failure.SourceAgent, Name: ts.Name(),
				Op: "list tools", Err: err, Message: "listing the toolset's tools failed; its last known tools are used"})
			tools = r.lastGood[ts.Name()]
		} else {
			r.lastGood[ts.Name()] = tools
		}
		r.lists[i] = tools
	}
	if snap := r.a.tools.Load(); snap.current(r.lists, r.a.pol()) {
		r.index, r.owner = snap.index, snap.owner
		return r.addInputTools(snap.defs)
	}
	snap := &toolSnapshot{lists: make([][]Tool, len(r.lists)), index: map[string]Tool{}}
	copy(snap.lists, r.lists)
	owner := map[string]string{}
	snap.owner = owner
	seen := map[failure.Key]bool{}
	for i, tools := range r.lists {
		ts := r.a.toolsets[i]
		for _, t := range tools {
			spec := t.Spec()
			if prev, dup := owner[spec.Name]; dup {
				r.survive(&failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Tool: spec.Name,
					Message: fmt.Sprintf("tool name %q from toolset %q collides with toolset %q; the second is hidden", spec.Name, ts.Name(), prev)})
				continue
			}
			owner[spec.Name] = ts.Name()
			snap.index[spec.Name] = t
			key := sourceKey(spec)
			ok := r.a.pol().Available(key)
			if !seen[key] {
				seen[key] = true
				snap.keys = append(snap.keys, key)
				snap.avail = append(snap.avail, ok)
			}
			desc := spec.Description
			if !ok {
				desc = "(currently unavailable: its source is failing) " + desc
			}
			snap.defs = append(snap.defs, llm.ToolDef{Name: spec.Name, Description: desc, Schema: spec.InputSchema})
		}
	}
	// Shared between runs: an append by a model must not write into it.
	snap.defs = slices.Clip(snap.defs)
	r.a.tools.Store(snap)
	r.index, r.owner = snap.index, snap.owner
	return r.addInputTools(snap.defs)
}

// addInputTools offers the run's Input.Tools beside the agent's own tools
// of the turn (defs and r.index, which stay shared, are copied). A name one
// of the agent's tools has keeps the agent's tool: the run's is hidden and
// reported once.
func (r *run) addInputTools(defs []llm.ToolDef) []llm.ToolDef {
	if len(r.in.Tools) == 0 {
		return defs
	}
	index := make(map[string]Tool, len(r.index)+len(r.in.Tools))
	for k, v := range r.index {
		index[k] = v
	}
	defs = slices.Clone(defs)
	for _, t := range r.in.Tools {
		spec := t.Spec()
		if _, dup := index[spec.Name]; dup {
			if !r.inToolsReported {
				r.survive(&failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Tool: spec.Name,
					Message: fmt.Sprintf("tool name %q of the run's input collides with a tool of the agent; the input's is hidden", spec.Name)})
			}
			continue
		}
		index[spec.Name] = t
		defs = append(defs, llm.ToolDef{Name: spec.Name, Description: spec.Description, Schema: spec.InputSchema})
	}
	r.inToolsReported = true
	r.index = index
	return defs
}
