package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus/task"
	"github.com/switchboard-dev/switchboard/failure"
)

// ToolsetConfig configures a Toolset. Zero values mean defaults.
type ToolsetConfig struct {
	// Name of the toolset (default "a2a").
	Name string
	// Peers to delegate to.
	Peers []Peer
	// HTTPClient is the base client (nil: a client on
	// http.DefaultTransport). Its Timeout should be zero: streams are long.
	HTTPClient *http.Client
	// Policy runs every remote operation (nil: failure.Default, asked at
	// each use; an agent the toolset is added to does not change it).
	Policy failure.Policy
	// Logger receives logs (nil: none).
	Logger *zerolog.Logger
	// PollInterval is the GetTask polling interval when a stream cannot be
	// resumed (default 500ms).
	PollInterval time.Duration
	// CancelTimeout bounds the CancelTask sent when a call is cancelled
	// (default 5s).
	CancelTimeout time.Duration
	// AskModel, when set, turns a peer's input-required into a tool result
	// for the model (the question, and the task_id to answer it with)
	// instead of an elicitation of a person.
	AskModel bool
	// Bus, if set, receives every remote task update: a *bus.Bus publishes
	// them on <prefix>.a2a.tasks.<task> (JetStream, replayable).
	Bus interface {
		PublishTask(ctx context.Context, u task.Update) error
	}
	// RefreshInterval, if positive, re-reads the peers' cards at this
	// interval (see Refresh) until Close.
	RefreshInterval time.Duration
	// CardTrust, if set, is the trust policy every fetched card must pass
	// (its signatures, A2A 1.0 §8.4), when it is read and on each Refresh;
	// nil: cards are not checked.
	CardTrust *CardTrust
	// Extensions are the A2A extensions asked of every peer (their URIs in
	// each request's A2A-Extensions header); each is told which answers
	// activated it (see [ClientExtension]).
	Extensions []ClientExtension
	// ClientOptions are more a2a-go client options for every peer, such as
	// package a2a/grpc's ClientOption for the gRPC binding.
	ClientOptions []a2aclient.FactoryOption
}

// Toolset is the delegation tools of a set of A2A peers. It is safe for
// concurrent use.
type Toolset struct {
	cfg     ToolsetConfig
	log     zerolog.Logger
	slog    *slog.Logger // a2a-go's logs, into log
	changed chan struct{}
	stop    context.CancelFunc
	wg      sync.WaitGroup

	mu    sync.Mutex
	tools []agent.Tool
	peers map[string]*remote
	order []string
}

var (
	_ agent.Toolset                          = (*Toolset)(nil)
	_ interface{ Changed() <-chan struct{} } = (*Toolset)(nil) // the agent watches it
)

// remote is a connected peer.
type remote struct {
	peer      Peer
	card      *a2ago.AgentCard
	client    *a2aclient.Client
	key       failure.Key
	streaming bool
	ts        *Toolset
}

// NewToolset resolves every peer's card (through the policy), connects a
// client over the best binding both sides speak, and builds the tools. A
// peer that cannot be reached fails the whole call: wiring errors should
// surface at start.
func NewToolset(ctx context.Context, cfg ToolsetConfig) (*Toolset, error) {
	if cfg.Name == "" {
		cfg.Name = "a2a"
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = defaultPollInterval
	}
	if cfg.CancelTimeout <= 0 {
		cfg.CancelTimeout = defaultCancelTimeout
	}
	ts := &Toolset{cfg: cfg, log: zerolog.Nop(), peers: map[string]*remote{}, changed: make(chan struct{}, 1)}
	if cfg.Logger != nil {
		ts.log = *cfg.Logger
	}
	ts.slog = newSlogger(&ts.log, slog.LevelInfo)
	for _, p := range cfg.Peers {
		if err := p.validate(); err != nil {
			return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceA2A, Name: p.Name, Message: err.Error()}
		}
		if _, dup := ts.peers[p.Name]; dup {
			return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceA2A, Name: p.Name, Message: "duplicate peer name"}
		}
		r, err := ts.connect(ctx, p)
		if err != nil {
			return nil, err
		}
		ts.peers[p.Name] = r
		ts.order = append(ts.order, p.Name)
	}
	ts.rebuild()
	if cfg.RefreshInterval > 0 {
		rctx, stop := context.WithCancel(ts.log.WithContext(context.WithoutCancel(ctx))) // a policy without a Logger logs here
		ts.stop = stop
		ts.wg.Add(1)
		go ts.refreshLoop(rctx)
	}
	return ts, nil
}

// rebuild recomputes the tool list from the peers (callers hold no lock).
func (ts *Toolset) rebuild() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var tools []agent.Tool
	for _, n := range ts.order {
		tools = append(tools, ts.peers[n].tools()...)
	}
	ts.tools = tools
}

func (ts *Toolset) refreshLoop(ctx context.Context) {
	defer ts.wg.Done()
	tick := time.NewTicker(ts.cfg.RefreshInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := ts.Refresh(ctx); err != nil && ctx.Err() == nil {
				ts.pol().Handle(ctx, err)
			}
		}
	}
}

// Refresh re-reads the card of every peer configured by URL. A peer whose
// card changed (skills, description, interfaces...) gets a new client and
// new tools, and Changed is signalled; the agent's next turn sees the new
// list. A peer that cannot be read keeps its last card; the first failure
// is returned.
func (ts *Toolset) Refresh(ctx context.Context) error {
	var firstErr error
	changed := false
	ts.mu.Lock()
	names := append([]string(nil), ts.order...)
	ts.mu.Unlock()
	for _, n := range names {
		ts.mu.Lock()
		old := ts.peers[n]
		ts.mu.Unlock()
		if old.peer.Card != nil {
			continue
		}
		r, err := ts.connect(ctx, old.peer)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		a, _ := json.Marshal(old.card)
		b, _ := json.Marshal(r.card)
		if string(a) == string(b) {
			_ = r.client.Destroy()
			continue
		}
		ts.mu.Lock()
		ts.peers[n] = r
		ts.mu.Unlock()
		_ = old.client.Destroy()
		changed = true
		ts.log.Info().Str("peer", n).Msg("a2a peer card changed; tools rebuilt")
	}
	if changed {
		ts.rebuild()
		select {
		case ts.changed <- struct{}{}:
		default:
		}
	}
	return firstErr
}

// Changed is signalled after Refresh found a changed card.
func (ts *Toolset) Changed() <-chan struct{} { return ts.changed }

// Name returns the toolset's name.
func (ts *Toolset) Name() string { return ts.cfg.Name }

// Tools returns one delegation tool per peer (or per skill).
func (ts *Toolset) Tools(context.Context) ([]agent.Tool, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.tools, nil
}

// Card returns the resolved card of a peer.
func (ts *Toolset) Card(peer string) (*a2ago.AgentCard, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	r, ok := ts.peers[peer]
	if !ok {
		return nil, false
	}
	return r.card, true
}

// Client returns the a2a-go client of a peer, for operations the tools do
// not cover (ListTasks, push configs).
func (ts *Toolset) Client(peer string) (*a2aclient.Client, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	r, ok := ts.peers[peer]
	if !ok {
		return nil, false
	}
	return r.client, true
}

// Close stops refreshing and releases the peers' clients.
func (ts *Toolset) Close() error {
	if ts.stop != nil {
		ts.stop()
		ts.wg.Wait()
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, r := range ts.peers {
		_ = r.client.Destroy()
	}
	return nil
}

func (ts *Toolset) connect(ctx context.Context, p Peer) (*remote, error) {
	key := failure.Key{Source: failure.SourceA2A, Name: p.Name}
	hc := httpClientFor(ts.cfg.HTTPClient, p)
	if pt, ok := hc.Transport.(*peerTransport); ok {
		pt.peer, pt.exts = p.Name, ts.cfg.Extensions
	}
	card := p.Card
	if card == nil {
		var rawCard []byte
		err := ts.pol().Execute(ctx, key, func(ctx context.Context) error {
			c, raw, err := resolveCardJSON(ctx, hc, p.URL, p.CardPath)
			card, rawCard = c, raw
			return err
		})
		if err != nil {
			fe := failure.From(err)
			c := *fe
			c.Name, c.Source = p.Name, failure.SourceA2A
			if c.Op == "" {
				c.Op = "resolve card"
			}
			return nil, &c
		}
		if err := ts.verifyPeerCard(ctx, p, rawCard); err != nil {
			return nil, err
		}
	}
	prefs := []a2ago.TransportProtocol{a2ago.TransportProtocolJSONRPC, a2ago.TransportProtocolHTTPJSON}
	if p.PreferREST {
		prefs[0], prefs[1] = prefs[1], prefs[0]
	}
	opts := []a2aclient.FactoryOption{
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: prefs}),
		a2aclient.WithCallInterceptors(slogInterceptor{log: ts.slog}),
		a2aclient.WithJSONRPCTransport(hc),
		a2aclient.WithRESTTransport(hc),
		a2aclient.WithCompatTransport(a2av0.Version, a2ago.TransportProtocolJSONRPC,
			a2av0.NewJSONRPCTransportFactory(a2av0.JSONRPCTransportConfig{Client: hc})),
		a2aclient.WithCompatTransport(a2av0.Version, a2ago.TransportProtocolHTTPJSON,
			a2av0.NewRESTTransportFactory(a2av0.RESTTransportConfig{Client: hc})),
	}
	client, err := a2aclient.NewFromCard(ctx, card, append(opts, ts.cfg.ClientOptions...)...)
	if err != nil {
		return nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceA2A, Name: p.Name, Op: "connect",
			Message: "no binding of the peer's card is usable (JSON-RPC or HTTP+JSON, A2A 1.0 or 0.3)", Err: err}
	}
	r := &remote{peer: p, card: card, client: client, key: key, ts: ts,
		streaming: card.Capabilities.Streaming && !p.NoStreaming}
	ts.log.Debug().Str("peer", p.Name).Str("card", card.Name).Bool("streaming", r.streaming).Msg("a2a peer connected")
	return r, nil
}

// inputSchema is the delegation tools' input.
var inputSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"message":{"type":"string","description":"What to ask the remote agent, in full: it does not see this conversation."},` +
	`"context_id":{"type":"string","description":"Optional: continue an earlier conversation with this agent (the context id from an earlier result)."},` +
	`"task_id":{"type":"string","description":"Optional: answer the question of a remote task that needs input (the task id from an earlier result)."}},` +
	`"required":["message"],"additionalProperties":false}`)

// toolName is the tool name of a peer, or of one of its skills.
func toolName(peer, skill string) string {
	if skill == "" {
		return agent.ToolName("a2a", peer)
	}
	return agent.ToolName("a2a", peer, skill)
}

func (r *remote) tools() []agent.Tool {
	card := r.card
	if r.peer.PerSkill && len(card.Skills) > 0 {
		out := make([]agent.Tool, 0, len(card.Skills))
		for _, s := range card.Skills {
			var d strings.Builder
			fmt.Fprintf(&d, "Delegate to the remote agent %q, skill %q: %s", card.Name, s.Name, s.Description)
			if len(s.Examples) > 0 {
				fmt.Fprintf(&d, " Examples: %s", strings.Join(s.Examples, "; "))
			}
			out = append(out, &delegateTool{r: r, skill: s.ID, spec: agent.ToolSpec{
				Name: toolName(r.peer.Name, s.ID), Title: s.Name, Description: d.String(), InputSchema: inputSchema,
				Source: agent.Provenance{Kind: failure.SourceA2A, Name: r.peer.Name, Tool: s.ID},
			}})
		}
		return out
	}
	desc := r.peer.Description
	if desc == "" {
		var d strings.Builder
		fmt.Fprintf(&d, "Delegate a task to the remote agent %q: %s", card.Name, card.Description)
		for i, s := range card.Skills {
			if i == 0 {
				d.WriteString(" Skills:")
			}
			fmt.Fprintf(&d, " %s (%s);", s.Name, s.Description)
		}
		desc = d.String()
	}
	return []agent.Tool{&delegateTool{r: r, spec: agent.ToolSpec{
		Name: toolName(r.peer.Name, ""), Description: desc, InputSchema: inputSchema,
		Source: agent.Provenance{Kind: failure.SourceA2A, Name: r.peer.Name},
	}}}
}

// pol is the toolset's failure policy: Config.Policy, else the process
// default.
func (ts *Toolset) pol() failure.Policy { return failure.Or(ts.cfg.Policy) }
