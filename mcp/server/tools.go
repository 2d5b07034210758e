package server

import (
	"context"
	"encoding/json"
	"maps"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/schema"
	"github.com/switchboard-dev/switchboard/mcp"
)

// listTimeout bounds one toolset's listing during a resynchronisation.
const listTimeout = 10 * time.Second

// toolRegistry keeps the go-sdk server's tools in step with the toolsets:
// every listed tool the permission policy does not deny, the first of each
// name.
type toolRegistry struct {
	s        *Server
	toolsets []agent.Toolset
	// servers is Config.Servers' toolset (nil without), whose tools are
	// offered as their servers define them (mcp.PassthroughTool).
	servers agent.Toolset
	schemas *schema.Cache

	// syncing serialises resynchronisations: a sync holds its one slot,
	// and waits for it no longer than its context. What follows up to mu is
	// the slot holder's; mu guards offered.
	syncing chan struct{}
	mu      sync.Mutex
	// last is each toolset's last good listing (a failing listing keeps it);
	// failing marks the toolsets whose last listing failed (reported to the
	// policy once, when it starts failing).
	last    map[int][]agent.Tool
	failing map[int]bool
	// abandoned holds, for a toolset whose listing outlasted its sync
	// (listTools), a channel closed when that listing returns: until then
	// the toolset is not listed again and counts as failing.
	abandoned map[int]<-chan struct{}
	// instructions are the servers' instructions the index was built with.
	instructions map[string]string
	// offered are the tools registered with the go-sdk server, by name.
	offered map[string]agent.Tool
	// With Config.FindAndCall the offered tools are not registered with
	// the go-sdk server: defs are their definitions, by name, and index
	// searches them (find_tools, findandcall.go).
	defs  map[string]*gomcp.Tool
	index *agent.ToolIndex
}

func newToolRegistry(s *Server) (*toolRegistry, error) {
	r := &toolRegistry{s: s, schemas: schema.NewCache(), syncing: make(chan struct{}, 1),
		last: map[int][]agent.Tool{}, failing: map[int]bool{}, abandoned: map[int]<-chan struct{}{},
		offered: map[string]agent.Tool{}, defs: map[string]*gomcp.Tool{}, index: agent.NewToolIndex(nil, nil)}
	for _, ts := range s.cfg.Toolsets {
		if ts == nil {
			return nil, failure.New(failure.Config, failure.SourceMCP, "server: Config.Toolsets holds a nil toolset")
		}
		r.toolsets = append(r.toolsets, ts)
	}
	if s.cfg.Servers != nil {
		r.servers = s.cfg.Servers.Toolset()
		r.toolsets = append(r.toolsets, r.servers)
	}
	if len(s.cfg.Runners) > 0 {
		var tools []agent.Tool
		for _, run := range s.cfg.Runners {
			t, err := agent.AsTool(run, nil)
			if err != nil {
				return nil, err
			}
			tools = append(tools, t)
		}
		r.toolsets = append(r.toolsets, agent.NewToolset("runners", tools...))
	}
	return r, nil
}

// lookup returns the offered tool of that name.
func (r *toolRegistry) lookup(name string) (agent.Tool, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.offered[name]
	return t, ok
}

// sync lists every toolset and registers the difference with the go-sdk
// server, which notifies sessions of the change. A toolset whose listing
// fails (or panics, or outlasts ctx or listTimeout, or is still running
// from an earlier sync) keeps its last list; the failure goes to the
// server's policy when the toolset starts failing (not again while it goes
// on failing), after the resynchronisation's slot is released. A sync
// whose ctx ends while it waits for another one returns without syncing
// (the offered tools stand); once its ctx has ended it lists no further
// toolset (those keep their last lists, their failing unchanged).
func (r *toolRegistry) sync(ctx context.Context) {
	var failed []*failure.Error
	defer func() { // after releasing the slot: a policy's OnFailure may list tools
		hctx := ctx
		if r.s.cfg.Logger != nil {
			hctx = r.s.log.WithContext(ctx) // a policy without a Logger logs here
		}
		for _, fe := range failed {
			failure.Or(r.s.policy).Handle(hctx, fe)
		}
	}()
	if !acquire(ctx, r.syncing) {
		return
	}
	defer func() { <-r.syncing }()
	want := map[string]agent.Tool{}
	var instructions map[string]string
	for i, ts := range r.toolsets {
		tools := r.last[i]
		if ctx.Err() == nil {
			if l, err := r.list(ctx, i, ts); err != nil {
				if !r.failing[i] {
					failed = append(failed, &failure.Error{Kind: failure.KindOf(err), Source: failure.SourceMCP, Name: ts.Name(),
						Op: "list tools", Err: err, Message: "listing the toolset's tools failed; its last known tools are offered"})
				}
				r.failing[i] = true
			} else {
				tools, r.last[i], r.failing[i] = l, l, false
			}
		}
		if si, ok := ts.(serverInstructor); ok && r.s.cfg.FindAndCall {
			for name, text := range si.ServerInstructions() {
				if instructions == nil {
					instructions = map[string]string{}
				}
				if _, dup := instructions[name]; !dup {
					instructions[name] = text
				}
			}
		}
		for _, t := range tools {
			spec := t.Spec()
			name := spec.Name
			if ts == r.servers {
				pt, ok := t.(mcp.PassthroughTool)
				if !ok {
					continue // the Manager's own cross-server tools are for agents
				}
				name = r.s.fronted.offeredName(spec.Source.Name, pt.Definition().Name)
			}
			if _, dup := want[name]; dup {
				r.s.log.Warn().Str("tool", name).Str("toolset", ts.Name()).Msg("tool name already offered; hidden")
				continue
			}
			if r.s.cfg.Permissions.Decide(spec, nil) == agent.Deny {
				continue
			}
			want[name] = t
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var gone []string
	for name := range r.offered {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
		}
	}
	find := r.s.cfg.FindAndCall
	changed := len(gone) > 0
	if len(gone) > 0 {
		slices.Sort(gone)
		if !find {
			r.s.mcp.RemoveTools(gone...)
		}
		for _, n := range gone {
			delete(r.offered, n)
			delete(r.defs, n)
		}
	}
	for name, t := range want {
		if old, ok := r.offered[name]; ok && old == t {
			continue
		}
		r.offered[name] = t
		def := r.mcpTool(t.Spec())
		if pt, ok := t.(mcp.PassthroughTool); ok && r.s.cfg.Servers != nil && pt.Definition() != nil {
			def = passthroughDef(pt.Definition())
		}
		def.Name = name
		changed = true
		if find {
			r.defs[name] = def
			continue
		}
		r.s.mcp.AddTool(def, r.handler(name))
	}
	if find && (changed || !maps.Equal(instructions, r.instructions)) {
		r.index = newFindIndex(r.offered, r.defs, instructions)
		r.instructions = instructions
	}
}

// list is toolset i's tools (listTools), for the holder of the sync's
// slot: while a listing of it that an earlier sync abandoned is still
// running, none is started and the toolset fails (Timeout), so a toolset
// that hangs costs one goroutine, not one per sync.
func (r *toolRegistry) list(ctx context.Context, i int, ts agent.Toolset) ([]agent.Tool, error) {
	if ch, ok := r.abandoned[i]; ok {
		select {
		case <-ch:
			delete(r.abandoned, i)
		default:
			return nil, &failure.Error{Kind: failure.Timeout, Source: failure.SourceMCP, Name: ts.Name(), Op: "list tools",
				Message: "an earlier listing of the toolset has not returned yet"}
		}
	}
	tools, running, err := listTools(ctx, ts)
	if running != nil {
		r.abandoned[i] = running
	}
	return tools, err
}

// listTools is ts's tools, listed within listTimeout on a goroutine of its
// own, so that a toolset ignoring its context cannot hold the caller: when
// ctx or listTimeout ends first, listTools returns a failure of kind
// Timeout and running, closed when the abandoned listing returns (its
// goroutine then ends; what it lists is dropped: it came after its
// deadline, as a toolset that heeds its context would have failed). A
// panic of the toolset is a failure of kind Panic (go-sdk does not recover
// its handlers' panics: one would end the process).
func listTools(ctx context.Context, ts agent.Toolset) (tools []agent.Tool, running <-chan struct{}, err error) {
	type listed struct {
		tools []agent.Tool
		err   error
	}
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	ch, done := make(chan listed, 1), make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				ch <- listed{err: &failure.Error{Kind: failure.Panic, Source: failure.SourceMCP, Name: ts.Name(), Op: "list tools",
					Message: "the toolset panicked", Err: &failure.PanicError{Value: p, Stack: debug.Stack()}}}
			}
		}()
		tools, err := ts.Tools(ctx)
		ch <- listed{tools, err}
	}()
	select {
	case l := <-ch:
		return l.tools, nil, l.err
	case <-ctx.Done():
	}
	select {
	case l := <-ch: // it returned as ctx ended
		return l.tools, nil, l.err
	default:
	}
	return nil, done, &failure.Error{Kind: failure.Timeout, Source: failure.SourceMCP, Name: ts.Name(), Op: "list tools",
		Err: ctx.Err(), Message: "the toolset did not list its tools in time"}
}

// acquire takes slot, a channel of capacity one, waiting no longer than
// ctx; it reports whether it took it. A free slot is taken even once ctx
// has ended.
func acquire(ctx context.Context, slot chan struct{}) bool {
	select {
	case slot <- struct{}{}:
		return true
	default:
	}
	select {
	case slot <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// serverInstructor is a toolset with agent.Toolset's optional
// ServerInstructions method (an mcp.Manager's toolset has it): find_tools
// indexes a server's instructions as context of its tools.
type serverInstructor interface {
	ServerInstructions() map[string]string
}

// handler serves tools/call for the tool named name.
func (r *toolRegistry) handler(name string) gomcp.ToolHandler {
	return func(ctx context.Context, req *gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
		return r.s.callTool(ctx, req, name), nil
	}
}

// mcpTool is the MCP definition of an agent tool. An input schema that is
// not a JSON object of type "object" (go-sdk refuses those) is offered as
// any object, and the tool's own validation decides. An output schema (a
// typed agent's answer, agent.ToolSpec.OutputSchema) is declared as the
// tool's outputSchema when it is of type "object", as MCP requires; its
// results then carry the value as structuredContent (toMCPResult).
func (r *toolRegistry) mcpTool(spec agent.ToolSpec) *gomcp.Tool {
	t := &gomcp.Tool{Name: spec.Name, Title: spec.Title, Description: spec.Description, InputSchema: objectSchema(spec.InputSchema)}
	if isObjectSchema(spec.OutputSchema) {
		t.OutputSchema = spec.OutputSchema
	}
	ann := &gomcp.ToolAnnotations{ReadOnlyHint: spec.ReadOnly}
	if !spec.ReadOnly {
		d := spec.Destructive
		ann.DestructiveHint = &d
	}
	t.Annotations = ann
	return t
}

// passthroughDef is a server's own tool definition as offered: a copy,
// its input schema made an object schema when it is not one (go-sdk
// refuses those).
func passthroughDef(d *gomcp.Tool) *gomcp.Tool {
	c := *d
	in, _ := json.Marshal(d.InputSchema)
	if !isObjectSchema(in) {
		c.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	if c.OutputSchema != nil {
		if out, _ := json.Marshal(c.OutputSchema); !isObjectSchema(out) {
			c.OutputSchema = nil
		}
	}
	return &c
}

// objectSchema returns s when it is a JSON object whose type is "object",
// else an empty object schema.
func objectSchema(s json.RawMessage) json.RawMessage {
	if isObjectSchema(s) {
		return s
	}
	return json.RawMessage(`{"type":"object"}`)
}

// isObjectSchema reports whether s is a JSON object whose type is "object".
func isObjectSchema(s json.RawMessage) bool {
	var m map[string]any
	return len(s) > 0 && json.Unmarshal(s, &m) == nil && m["type"] == "object"
}
