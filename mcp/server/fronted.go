package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/mcp"
)

// Prefix says whether the names of what [Config].Servers offer (tools,
// prompts, resources' and templates' names) carry their server's name.
// Resource URIs are never rewritten: a tool's _meta names its MCP App by
// URI (ui://...), and hosts read that URI as it is.
type Prefix int

const (
	// PrefixAuto prefixes when Servers has more than one server.
	PrefixAuto Prefix = iota
	// PrefixOn always prefixes: mcp__<server>__<name>, as an agent sees
	// a Manager's tools.
	PrefixOn
	// PrefixOff never prefixes: each server's own names (the first server
	// of a name wins; a later one is hidden and logged).
	PrefixOff
)

// ParsePrefix reads "auto", "on" or "off".
func ParsePrefix(s string) (Prefix, error) {
	switch s {
	case "", "auto":
		return PrefixAuto, nil
	case "on":
		return PrefixOn, nil
	case "off":
		return PrefixOff, nil
	}
	return PrefixAuto, fmt.Errorf("prefix %q: want auto, on or off", s)
}

// frontedListTimeout bounds one server's listing of its resources,
// templates or prompts during a resynchronisation.
const frontedListTimeout = 10 * time.Second

// fronted offers the resources, resource templates, prompts, completion,
// subscriptions and logging of Config.Servers through the go-sdk server,
// each routed back to the server it came from.
type fronted struct {
	s      *Server
	m      *mcp.Manager
	prefix bool

	syncing chan struct{} // serialises sync: its one slot, waited for no longer than the sync's context
	mu      sync.Mutex    // guards what follows
	// last is each server's last good listing.
	last map[string]*listing
	// resources, templates and prompts are what is offered: by URI, URI
	// template and offered name.
	resources map[string]route
	templates map[string]route
	prompts   map[string]route
	// subs counts the client subscriptions of each URI passed downstream.
	subs map[string]int
	// level is the most verbose log level a client asked for, set on every
	// server with logging.
	level gomcp.LoggingLevel
}

// listing is one server's resources, templates and prompts.
type listing struct {
	resources []*gomcp.Resource
	templates []*gomcp.ResourceTemplate
	prompts   []*gomcp.Prompt
}

// route is where an offered item goes: its server, its own name there
// (prompts) and its definition as offered (to notice changes).
type route struct {
	server, name string
	def          string
	tmpl         *uritemplate.Template
}

func newFronted(s *Server, m *mcp.Manager, p Prefix) *fronted {
	on := p == PrefixOn || p == PrefixAuto && len(m.ServerNames()) > 1
	return &fronted{s: s, m: m, prefix: on, syncing: make(chan struct{}, 1), last: map[string]*listing{}, resources: map[string]route{},
		templates: map[string]route{}, prompts: map[string]route{}, subs: map[string]int{}}
}

// offeredName is name as offered for server.
func (f *fronted) offeredName(server, name string) string {
	if !f.prefix {
		return name
	}
	return "mcp__" + server + "__" + name
}

// capabilities returns what any server declared: whether any offers
// resources, subscriptions, prompts, completion and logging.
func (f *fronted) capabilities() (res, sub, prompts, complete, logging bool) {
	for _, name := range f.m.ServerNames() {
		c := f.m.ServerCapabilities(name)
		if c == nil {
			continue
		}
		res = res || c.Resources != nil
		sub = sub || c.Resources != nil && c.Resources.Subscribe
		prompts = prompts || c.Prompts != nil
		complete = complete || c.Completions != nil
		logging = logging || c.Logging != nil
	}
	return
}

// extensions returns the extensions that the servers connected now
// declared at their handshake (io.modelcontextprotocol/ui, an MCP App's,
// among them): for an extension two declare, the first server's settings.
func (f *fronted) extensions() map[string]any {
	var ext map[string]any
	for _, st := range f.m.Status() {
		if st.State != "ready" {
			continue
		}
		c := f.m.ServerCapabilities(st.Name)
		if c == nil {
			continue
		}
		for k, v := range c.Extensions {
			if ext == nil {
				ext = map[string]any{}
			}
			if _, ok := ext[k]; !ok {
				ext[k] = v
			}
		}
	}
	return ext
}

// declare adds to caps, the capabilities of one initialize or
// server/discover result (go-sdk's copy for that result), the extensions
// of the servers connected now; an extension the server declares itself
// (Config.MCPOptions, tasks, skills) keeps its own settings. go-sdk fixes
// its servers' capabilities when they are built; each result is its own
// copy, so that a session sees the extensions of the servers connected at
// its initialize.
func (f *fronted) declare(caps *gomcp.ServerCapabilities) {
	ext := f.extensions()
	if caps == nil || len(ext) == 0 {
		return
	}
	out := maps.Clone(caps.Extensions) // a fresh map: go-sdk's may be shared
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range ext {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	caps.Extensions = out
}

// configure sets the go-sdk server options that route to the servers,
// before the server is built.
func (f *fronted) configure(opts *gomcp.ServerOptions) {
	res, sub, prompts, complete, _ := f.capabilities()
	opts.HasResources = opts.HasResources || res
	opts.HasPrompts = opts.HasPrompts || prompts
	if sub {
		userSub, userUnsub := opts.SubscribeHandler, opts.UnsubscribeHandler
		opts.SubscribeHandler = func(ctx context.Context, req *gomcp.SubscribeRequest) error {
			if server, ok := f.serverOf(req.Params.URI); ok {
				return f.subscribe(ctx, server, req.Params.URI, true)
			}
			if userSub != nil {
				return userSub(ctx, req)
			}
			return gomcp.ResourceNotFoundError(req.Params.URI)
		}
		opts.UnsubscribeHandler = func(ctx context.Context, req *gomcp.UnsubscribeRequest) error {
			if server, ok := f.serverOf(req.Params.URI); ok {
				return f.subscribe(ctx, server, req.Params.URI, false)
			}
			if userUnsub != nil {
				return userUnsub(ctx, req)
			}
			return nil
		}
	}
	if complete {
		user := opts.CompletionHandler
		opts.CompletionHandler = func(ctx context.Context, req *gomcp.CompleteRequest) (*gomcp.CompleteResult, error) {
			if res, ok, err := f.complete(ctx, req); ok {
				return res, err
			}
			if user != nil {
				return user(ctx, req)
			}
			return &gomcp.CompleteResult{Completion: gomcp.CompletionResultDetails{Values: []string{}}}, nil
		}
	}
}

// serverOf is the server a URI is read from: the one listing it, else the
// one whose template matches it.
func (f *fronted) serverOf(uri string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.resources[uri]; ok {
		return r.server, true
	}
	keys := slices.Sorted(maps.Keys(f.templates))
	for _, k := range keys {
		if r := f.templates[k]; r.tmpl != nil && r.tmpl.Match(uri) != nil {
			return r.server, true
		}
	}
	return "", false
}

// subscribe passes the first subscription of a URI on to its server, and
// the last unsubscription.
func (f *fronted) subscribe(ctx context.Context, server, uri string, on bool) error {
	f.mu.Lock()
	n := f.subs[uri]
	if on {
		f.subs[uri] = n + 1
	} else if n > 0 {
		f.subs[uri] = n - 1
		if n == 1 {
			delete(f.subs, uri)
		}
	}
	f.mu.Unlock()
	switch {
	case on && n == 0:
		if err := f.m.Subscribe(ctx, server, uri); err != nil {
			f.mu.Lock()
			f.subs[uri]--
			if f.subs[uri] <= 0 {
				delete(f.subs, uri)
			}
			f.mu.Unlock()
			return wireErr(err)
		}
	case !on && n == 1:
		return wireErr(f.m.Unsubscribe(ctx, server, uri))
	}
	return nil
}

// complete routes a completion to the server of its prompt or resource
// template; ok is false for a reference no server offers.
func (f *fronted) complete(ctx context.Context, req *gomcp.CompleteRequest) (*gomcp.CompleteResult, bool, error) {
	p := req.Params
	if p == nil || p.Ref == nil {
		return nil, false, nil
	}
	ref := *p.Ref
	var server string
	f.mu.Lock()
	switch ref.Type {
	case "ref/prompt":
		if r, ok := f.prompts[ref.Name]; ok {
			server, ref.Name = r.server, r.name
		}
	case "ref/resource":
		if r, ok := f.templates[ref.URI]; ok {
			server = r.server
		} else if r, ok := f.resources[ref.URI]; ok {
			server = r.server
		}
	}
	f.mu.Unlock()
	if server == "" {
		return nil, false, nil
	}
	params := *p
	params.Ref = &ref
	var res *gomcp.CompleteResult
	err := f.m.WithSession(ctx, server, "complete", func(ctx context.Context, sess *gomcp.ClientSession) error {
		r, err := sess.Complete(ctx, &params)
		res = r
		return err
	})
	return res, true, wireErr(err)
}

// setLevel passes a client's logging/setLevel on to every server with
// logging when it is more verbose than any asked before (each client gets
// only the messages of its own level: go-sdk filters per session).
func (f *fronted) setLevel(ctx context.Context, level gomcp.LoggingLevel) {
	f.mu.Lock()
	if f.level != "" && levelRank(level) >= levelRank(f.level) {
		f.mu.Unlock()
		return
	}
	f.level = level
	f.mu.Unlock()
	for _, name := range f.m.ServerNames() {
		if c := f.m.ServerCapabilities(name); c == nil || c.Logging == nil {
			continue
		}
		err := f.m.WithSession(ctx, name, "set log level", func(ctx context.Context, sess *gomcp.ClientSession) error {
			return sess.SetLoggingLevel(ctx, &gomcp.SetLoggingLevelParams{Level: level})
		})
		if err != nil {
			f.s.log.Warn().Err(err).Str("server", name).Msg("passing the log level on failed")
		}
	}
}

// levelRank orders the syslog levels of MCP, debug first.
func levelRank(l gomcp.LoggingLevel) int {
	i := slices.Index([]gomcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}, l)
	if i < 0 {
		return 1
	}
	return i
}

// sync lists every server's resources, templates and prompts and registers
// the difference with the go-sdk server (which notifies clients). A
// server whose listing fails keeps its last good one. A sync whose ctx
// ends while it waits for another one returns without syncing (what is
// offered stands); the listings themselves go through the Manager, which
// heeds ctx (and frontedListTimeout).
func (f *fronted) sync(ctx context.Context) {
	if !acquire(ctx, f.syncing) {
		return
	}
	defer func() { <-f.syncing }()
	wantRes, wantTmpl, wantPrompts := map[string]route{}, map[string]route{}, map[string]route{}
	var addRes []*gomcp.Resource
	var addTmpl []*gomcp.ResourceTemplate
	var addPrompts []*gomcp.Prompt
	for _, name := range f.m.ServerNames() {
		l := f.list(ctx, name)
		if l == nil {
			continue
		}
		for _, r := range l.resources {
			if _, err := url.Parse(r.URI); err != nil || r.URI == "" {
				continue
			}
			if _, dup := wantRes[r.URI]; dup {
				f.s.log.Warn().Str("uri", r.URI).Str("server", name).Msg("resource URI already offered; hidden")
				continue
			}
			c := *r
			c.Name = f.offeredName(name, r.Name)
			wantRes[r.URI] = route{server: name, def: defKey(&c)}
			addRes = append(addRes, &c)
		}
		for _, t := range l.templates {
			tmpl, err := uritemplate.New(t.URITemplate)
			if err != nil {
				continue
			}
			if _, dup := wantTmpl[t.URITemplate]; dup {
				f.s.log.Warn().Str("uri_template", t.URITemplate).Str("server", name).Msg("resource template already offered; hidden")
				continue
			}
			c := *t
			c.Name = f.offeredName(name, t.Name)
			wantTmpl[t.URITemplate] = route{server: name, def: defKey(&c), tmpl: tmpl}
			addTmpl = append(addTmpl, &c)
		}
		for _, p := range l.prompts {
			n := f.offeredName(name, p.Name)
			if _, dup := wantPrompts[n]; dup {
				f.s.log.Warn().Str("prompt", n).Str("server", name).Msg("prompt name already offered; hidden")
				continue
			}
			c := *p
			c.Name = n
			wantPrompts[n] = route{server: name, name: p.Name, def: defKey(&c)}
			addPrompts = append(addPrompts, &c)
		}
	}
	f.mu.Lock()
	oldRes, oldTmpl, oldPrompts := f.resources, f.templates, f.prompts
	f.resources, f.templates, f.prompts = wantRes, wantTmpl, wantPrompts
	f.mu.Unlock()
	if gone := goneKeys(oldRes, wantRes); len(gone) > 0 {
		f.s.mcp.RemoveResources(gone...)
	}
	if gone := goneKeys(oldTmpl, wantTmpl); len(gone) > 0 {
		f.s.mcp.RemoveResourceTemplates(gone...)
	}
	if gone := goneKeys(oldPrompts, wantPrompts); len(gone) > 0 {
		f.s.mcp.RemovePrompts(gone...)
	}
	for _, r := range addRes {
		if old, ok := oldRes[r.URI]; !ok || old.def != wantRes[r.URI].def {
			f.s.mcp.AddResource(r, f.readHandler(wantRes[r.URI].server))
		}
	}
	for _, t := range addTmpl {
		if old, ok := oldTmpl[t.URITemplate]; !ok || old.def != wantTmpl[t.URITemplate].def {
			f.s.mcp.AddResourceTemplate(t, f.readHandler(wantTmpl[t.URITemplate].server))
		}
	}
	for _, p := range addPrompts {
		if old, ok := oldPrompts[p.Name]; !ok || old.def != wantPrompts[p.Name].def {
			r := wantPrompts[p.Name]
			f.s.mcp.AddPrompt(p, f.promptHandler(r.server, r.name))
		}
	}
}

// list is a server's current listing, or its last good one when listing
// fails; nil for a server that has not connected.
func (f *fronted) list(ctx context.Context, name string) *listing {
	caps := f.m.ServerCapabilities(name)
	f.mu.Lock()
	last := f.last[name]
	f.mu.Unlock()
	if caps == nil {
		return last
	}
	l := &listing{}
	var err error
	if caps.Resources != nil {
		if l.resources, err = collect(ctx, f.m.Resources, name); err == nil {
			l.templates, err = collect(ctx, f.m.ResourceTemplates, name)
		}
	}
	if err == nil && caps.Prompts != nil {
		l.prompts, err = collect(ctx, f.m.Prompts, name)
	}
	if err != nil {
		f.listFailed(ctx, name, err)
		return last
	}
	f.mu.Lock()
	f.last[name] = l
	f.mu.Unlock()
	return l
}

// listFailed hands a failed listing of name's resources, templates or
// prompts to the server's policy, as a toolset's failed listing is (the
// Manager reports no listing of these itself). A server that is not
// connected is only logged: its connection's failure is the Manager's to
// report, through its own policy, and the listing names no operation of
// its own then (the Manager's listing sets Op when the request itself
// failed).
func (f *fronted) listFailed(ctx context.Context, name string, err error) {
	var fe *failure.Error
	if ctx.Err() != nil || !errors.As(err, &fe) || fe.Op == "" {
		f.s.log.Warn().Err(err).Str("server", name).Msg("listing resources and prompts failed; offering the last list")
		return
	}
	hctx := ctx
	if f.s.cfg.Logger != nil {
		hctx = f.s.log.WithContext(ctx) // a policy without a Logger logs here
	}
	failure.Or(f.s.policy).Handle(hctx, &failure.Error{Kind: fe.Kind, Source: failure.SourceMCP, Name: name, Op: fe.Op, Err: err,
		Message: "listing the server's resources and prompts failed; its last list is offered"})
}

// collect gathers a paginated listing, bounded by frontedListTimeout.
func collect[T any](ctx context.Context, list func(context.Context, string) iter.Seq2[*T, error], name string) ([]*T, error) {
	ctx, cancel := context.WithTimeout(ctx, frontedListTimeout)
	defer cancel()
	var out []*T
	for v, err := range list(ctx, name) {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// readHandler reads a resource at server, the result unchanged.
func (f *fronted) readHandler(server string) gomcp.ResourceHandler {
	return func(ctx context.Context, req *gomcp.ReadResourceRequest) (*gomcp.ReadResourceResult, error) {
		var res *gomcp.ReadResourceResult
		err := f.m.WithSession(ctx, server, "read resource", func(ctx context.Context, sess *gomcp.ClientSession) error {
			r, err := sess.ReadResource(ctx, &gomcp.ReadResourceParams{URI: req.Params.URI, Meta: req.Params.Meta})
			res = r
			return err
		})
		return res, wireErr(err)
	}
}

// promptHandler gets a prompt by its own name at server, the result
// unchanged.
func (f *fronted) promptHandler(server, name string) gomcp.PromptHandler {
	return func(ctx context.Context, req *gomcp.GetPromptRequest) (*gomcp.GetPromptResult, error) {
		var res *gomcp.GetPromptResult
		err := f.m.WithSession(ctx, server, "get prompt", func(ctx context.Context, sess *gomcp.ClientSession) error {
			r, err := sess.GetPrompt(ctx, &gomcp.GetPromptParams{Name: name, Arguments: req.Params.Arguments, Meta: req.Params.Meta})
			res = r
			return err
		})
		return res, wireErr(err)
	}
}

// wireErr is a downstream failure as the client should see it: the
// server's own JSON-RPC error when it answered with one.
func wireErr(err error) error {
	if err == nil {
		return nil
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we
	}
	return err
}

// defKey is an item's definition as JSON, to notice a change.
func defKey(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func goneKeys(old, want map[string]route) []string {
	var gone []string
	for k := range old {
		if _, ok := want[k]; !ok {
			gone = append(gone, k)
		}
	}
	slices.Sort(gone)
	return gone
}
