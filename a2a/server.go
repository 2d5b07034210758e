package a2a

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/a2a/internal/cardsig"
	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
)

// Paths of the bindings under the handler's root.
const (
	jsonrpcPath = "/jsonrpc"
	restPath    = "/rest"
)

// ServerConfig configures a Server. Only Agent is required.
type ServerConfig struct {
	// Agent answers every task: an *agent.Agent, a workflow, or any
	// agent.Runner. Tasks of one A2A context continue one conversation when
	// it is an *agent.Agent; other runners start afresh with each message.
	Agent agent.Runner
	// URL is the public URL of the handler's root as mounted (for example
	// "https://example.com/agents/research"). Empty: derived from each
	// card request's Host (and X-Forwarded-Proto) and path; set it when the
	// handler is mounted under a prefix with http.StripPrefix or behind a
	// proxy that rewrites paths.
	URL string
	// GRPCURL, if set, is the address where the server is also served
	// over gRPC (package a2a/grpc's Register): the card names it as a
	// GRPC interface.
	GRPCURL string
	// Version of the agent, for its card (default "1.0.0").
	Version string
	// Skills on the card; nil means one skill per tool of the agent.
	Skills []a2ago.AgentSkill
	// Provider, DocumentationURL and IconURL go on the card as given.
	Provider         *a2ago.AgentProvider
	DocumentationURL string
	IconURL          string
	// ExtendedCard, if set, is served to authenticated callers
	// (GetExtendedAgentCard); nil answers "not configured".
	ExtendedCard *a2ago.AgentCard
	// CardKey, if set, signs the public card (and ExtendedCard): each
	// served card carries a JWS over its canonical form in its signatures
	// (A2A 1.0 §8.4), for clients that check it ([CardTrust]).
	CardKey *CardKey
	// Extensions are the A2A extensions the server supports: declared on
	// its card, activated per request through the A2A-Extensions header
	// (see [Extension]).
	Extensions []Extension
	// Store keeps the tasks instead of memory: any a2a-go task store (nil:
	// in memory, per replica). For tasks shared by replicas and kept across
	// restarts, bus/store's OpenTasks gives one on JetStream (its Store,
	// and PushConfigs for PushStore).
	Store taskstore.Store
	// TaskTTL is how long the in-memory store keeps a task after its last
	// update (default 24 hours; negative: forever); then the task is not
	// found and is deleted. It does not apply to Store.
	TaskTTL time.Duration
	// Auth, if set, guards every operation (not the public card).
	Auth *Auth
	// PushNotifications enables push notification configs.
	PushNotifications bool
	// PushStore keeps the push notification configs instead of memory: any
	// a2a-go push config store (nil: in memory).
	PushStore push.ConfigStore
	// AllowPrivatePush lets push deliveries reach loopback and private
	// addresses (refused by default: SSRF).
	AllowPrivatePush bool
	// AskClient sends the questions of a served run (its agents' permission
	// asks and Call.Elicit, nested runs included) to the A2A client: a
	// question becomes the task's input-required (or auth-required) state,
	// and the client's next message on the task is the answer. The client
	// then approves tools on this server's behalf: set it only when the
	// callers may. False: questions go to each agent's own Elicitor.
	AskClient bool
	// InputTimeout bounds how long a run waits for the answer to an
	// input-required turn (default 10 minutes); then the question is
	// cancelled and the run goes on without it.
	InputTimeout time.Duration
	// ChunkBytes: the model's answer streams into the task's "answer"
	// artifact in chunks of at least this many bytes (default 256; a
	// negative value sends the answer in one piece at the end).
	ChunkBytes int
	// MaxRequestBytes bounds the body of one request (default 4 MiB);
	// larger ones are refused with HTTP 413 before they are read (over
	// gRPC, package a2a/grpc refuses a larger message with
	// ResourceExhausted). A request's JSON (over gRPC, its message's JSON
	// form) may also nest at most MaxRequestDepth levels and hold at most
	// MaxRequestValues values.
	MaxRequestBytes int64
	// MaxTasks bounds the tasks the server runs at once (default 256;
	// negative: no bound). A message that would start one more is refused
	// with a [failure.Error] of Kind [failure.Transient] naming the bound (an
	// A2A server error on the wire). A task holds its slot until its run
	// ends, also when its client has gone, and while it waits for input.
	MaxTasks int
	// MaxTasksPerCaller bounds the tasks one caller runs at once (default
	// 16; negative: no bound), refused like MaxTasks. The caller is the one
	// Auth authenticated, or without Auth the client's IPv4 address or
	// IPv6 /64 (behind a proxy, every client has the proxy's: set Auth, or
	// raise the bound); over gRPC, package a2a/grpc's Options.Caller, else
	// the gRPC peer's address. A caller's tasks over every binding count
	// together.
	MaxTasksPerCaller int
	// KeepAlive sends SSE keep-alives at this interval (0: none).
	KeepAlive time.Duration
	// Policy handles the server's failures (nil: failure.Default, asked
	// at each use).
	Policy failure.Policy
	// Logger receives logs (nil: none).
	Logger *zerolog.Logger
}

// Server serves an agent as an A2A peer. Mount Handler in an HTTP server;
// Close stops the runs in flight.
type Server struct {
	cfg     ServerConfig
	log     zerolog.Logger
	handler a2asrv.RequestHandler
	mux     *http.ServeMux
	caps    a2ago.AgentCapabilities

	ctx    context.Context // parent of every run
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	runs     map[a2ago.TaskID]*taskRun
	sessions *sessionCache
	tel      *telemetry.Source // the agent's providers (requests metric)
	slots    *taskSlots        // MaxTasks, MaxTasksPerCaller
	signer   *cardsig.Signer   // CardKey; nil: cards are not signed
}

// pol is the server's failure policy: ServerConfig.Policy, else the process
// default.
func (s *Server) pol() failure.Policy { return failure.Or(s.cfg.Policy) }

// NewServer builds the A2A server of cfg.Agent.
func NewServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if cfg.Agent == nil {
		return nil, failure.New(failure.Config, failure.SourceA2A, "a2a.ServerConfig.Agent is required")
	}
	if cfg.Version == "" {
		cfg.Version = "1.0.0"
	}
	if cfg.InputTimeout <= 0 {
		cfg.InputTimeout = 10 * time.Minute
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = defaultMaxRequestBytes
	}
	if cfg.MaxTasks == 0 {
		cfg.MaxTasks = defaultMaxTasks
	}
	if cfg.MaxTasksPerCaller == 0 {
		cfg.MaxTasksPerCaller = defaultMaxTasksPerCaller
	}
	if err := cfg.Auth.validate(); err != nil {
		return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceA2A, Message: err.Error()}
	}
	signer, err := cfg.CardKey.signer()
	if err != nil {
		return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceA2A, Message: "a2a.ServerConfig.CardKey: " + err.Error()}
	}
	if signer != nil && cfg.ExtendedCard != nil {
		ext, err := signCard(signer, cfg.ExtendedCard, func(c *a2ago.AgentCard) ([]byte, error) { return json.Marshal(c) })
		if err != nil {
			return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceA2A, Message: "signing ExtendedCard: " + err.Error()}
		}
		cfg.ExtendedCard = ext
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Server{cfg: cfg, log: zerolog.Nop(), ctx: rctx, cancel: cancel,
		runs: map[a2ago.TaskID]*taskRun{}, sessions: newSessionCache(1024), tel: telemetrySource(cfg.Agent),
		slots: newTaskSlots(cfg.MaxTasks, cfg.MaxTasksPerCaller), signer: signer}
	if cfg.Logger != nil {
		s.log = *cfg.Logger
	}
	s.ctx = s.log.WithContext(s.ctx) // a policy without a Logger logs here
	if err := s.openStores(); err != nil {
		return nil, err
	}
	s.caps = a2ago.AgentCapabilities{Streaming: true, PushNotifications: cfg.PushNotifications,
		ExtendedAgentCard: cfg.ExtendedCard != nil, Extensions: declarations(cfg.Extensions)}
	s.handler = &answerHandler{RequestHandler: s.newRequestHandler(&executor{s: s}, s.slogger()), s: s}
	s.mux = s.routes()
	return s, nil
}

// newRequestHandler is a2a-go's request handler (interceptors, capability
// checks, logging) around our task manager (taskHandler) over our store,
// with the caller's identity and push notifications.
func (s *Server) newRequestHandler(ex a2asrv.AgentExecutor, log *slog.Logger) a2asrv.RequestHandler {
	cfg := s.cfg
	opts := []a2asrv.RequestHandlerOption{
		a2asrv.WithTaskStore(cfg.Store),
		a2asrv.WithCapabilityChecks(&s.caps),
		a2asrv.WithCallInterceptors(userInterceptor{}, outcomeInterceptor{}),
		a2asrv.WithLogger(log),
	}
	if cfg.ExtendedCard != nil {
		opts = append(opts, a2asrv.WithExtendedAgentCard(cfg.ExtendedCard))
	}
	th := &taskHandler{ex: ex, store: cfg.Store, s: s, live: map[a2ago.TaskID]*execution{},
		guard: pushGuard{allowPrivate: cfg.AllowPrivatePush}}
	if cfg.PushNotifications {
		th.pushes = cfg.PushStore
		if th.pushes == nil {
			th.pushes = push.NewInMemoryStore()
		}
		th.sender = push.NewHTTPPushSender(&push.HTTPSenderConfig{Timeout: 10 * time.Second, AllowPrivateNetworks: cfg.AllowPrivatePush})
		opts = append(opts, a2asrv.WithPushNotifications(th.pushes, th.sender))
	}
	h := a2asrv.NewHandler(ex, opts...)
	ih, ok := h.(*a2asrv.InterceptedHandler)
	if !ok { // not a2a-go v2.4.0's layout: its own manager serves everything
		return h
	}
	th.RequestHandler = ih.Handler
	ih.Handler = th
	return ih
}

// slogger adapts the zerolog logger for a2a-go, which logs with slog.
func (s *Server) slogger() *slog.Logger { return newSlogger(s.cfg.Logger, slog.LevelWarn) }

func (s *Server) routes() *http.ServeMux {
	var topts []a2asrv.TransportOption
	if s.cfg.KeepAlive > 0 {
		topts = append(topts, a2asrv.WithTransportKeepAlive(s.cfg.KeepAlive))
	}
	topts = append(topts, a2asrv.WithTransportPanicHandler(func(r any) error {
		s.pol().Handle(s.ctx, &failure.Error{Kind: failure.Panic, Source: failure.SourceA2A, Op: "serve",
			Err: &failure.PanicError{Value: r}})
		return a2ago.ErrInternalError
	}))
	lim := s.cfg.MaxRequestBytes
	rpc := versioned(bindingJSONRPC,
		a2asrv.NewJSONRPCHandler(s.handler, topts...),
		v03JSONRPC(lim, a2av0.NewJSONRPCHandler(s.handler, topts...)))
	rest := versioned(bindingREST,
		a2asrv.NewRESTHandler(s.handler, topts...),
		v03REST(lim, a2av0.NewRESTHandler(s.handler, topts...)))
	mux := http.NewServeMux()
	card := http.HandlerFunc(s.serveCard)
	mux.Handle("GET "+cardPath, card)
	mux.Handle("GET "+legacyCardPath, card)
	mux.Handle("OPTIONS "+cardPath, card)
	rpcH := withPeer(s.cfg.Auth.middleware(bindingJSONRPC, limitBody(bindingJSONRPC, lim, s.withExtensions(rpc))))
	mux.Handle(jsonrpcPath, rpcH)
	mux.Handle("POST /{$}", rpcH)
	mux.Handle(restPath+"/", withPeer(s.cfg.Auth.middleware(bindingREST, limitBody(bindingREST, lim, s.withExtensions(http.StripPrefix(restPath, rest))))))
	return mux
}

// ServeHTTP serves the card, JSON-RPC (at / and /jsonrpc) and HTTP+JSON
// (under /rest).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.serveTraced(w, r) }

// Handler returns the server as an http.Handler.
func (s *Server) Handler() http.Handler { return s }

// RequestHandler returns the transport-independent a2a-go handler (for
// gRPC or custom bindings).
func (s *Server) RequestHandler() a2asrv.RequestHandler { return s.handler }

// Config is the server's configuration as given: what a wrapper serving it
// over another binding (package a2a/grpc) reads, for instance whether it
// authenticates its callers.
func (s *Server) Config() ServerConfig { return s.cfg }

// Close cancels the runs in flight and waits for them to end.
func (s *Server) Close() error {
	s.cancel()
	s.wg.Wait()
	return nil
}

// baseURL is the public URL of the handler root for a request.
func (s *Server) baseURL(r *http.Request) string {
	if s.cfg.URL != "" {
		return strings.TrimRight(s.cfg.URL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
		scheme = p
	}
	prefix := strings.TrimSuffix(r.URL.Path, cardPath)
	prefix = strings.TrimSuffix(prefix, legacyCardPath)
	return scheme + "://" + r.Host + strings.TrimRight(prefix, "/")
}

// Card returns the agent card as served under base (signed with
// ServerConfig.CardKey, if set).
func (s *Server) Card(ctx context.Context, base string) *a2ago.AgentCard {
	card := s.unsignedCard(ctx, base)
	if s.signer == nil {
		return card
	}
	signed, err := signCard(s.signer, card, func(c *a2ago.AgentCard) ([]byte, error) { return cardJSON(ctx, c) })
	if err != nil {
		s.pol().Handle(ctx, &failure.Error{Kind: failure.Internal, Source: failure.SourceA2A, Op: "sign card", Err: err})
		return card
	}
	return signed
}

// unsignedCard is the agent card under base before it is signed.
func (s *Server) unsignedCard(ctx context.Context, base string) *a2ago.AgentCard {
	skills := s.cfg.Skills
	if skills == nil {
		skills = s.toolSkills(ctx)
	}
	desc := s.cfg.Agent.Description()
	if desc == "" {
		desc = "A Switchboard agent."
	}
	outModes := []string{"text/plain"}
	if agent.OutputOf(s.cfg.Agent) != nil {
		outModes = append(outModes, "application/json") // a typed answer: a data part (chunker.go)
	}
	card := &a2ago.AgentCard{
		Name:        s.cfg.Agent.Name(),
		Description: desc,
		Version:     s.cfg.Version,
		SupportedInterfaces: []*a2ago.AgentInterface{
			{URL: base + jsonrpcPath, ProtocolBinding: a2ago.TransportProtocolJSONRPC, ProtocolVersion: a2ago.Version},
			{URL: base + restPath, ProtocolBinding: a2ago.TransportProtocolHTTPJSON, ProtocolVersion: a2ago.Version},
			// 0.3 clients read these as url/preferredTransport (the first)
			// and additionalInterfaces (the rest).
			{URL: base + jsonrpcPath, ProtocolBinding: a2ago.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version},
			{URL: base + restPath, ProtocolBinding: a2ago.TransportProtocolHTTPJSON, ProtocolVersion: a2av0.Version},
		},
		Capabilities:       s.caps,
		DefaultInputModes:  []string{"text/plain", "application/json"},
		DefaultOutputModes: outModes,
		Skills:             skills,
		Provider:           s.cfg.Provider,
		DocumentationURL:   s.cfg.DocumentationURL,
		IconURL:            s.cfg.IconURL,
	}
	if s.cfg.GRPCURL != "" {
		card.SupportedInterfaces = append(card.SupportedInterfaces,
			&a2ago.AgentInterface{URL: s.cfg.GRPCURL, ProtocolBinding: a2ago.TransportProtocolGRPC, ProtocolVersion: a2ago.Version})
	}
	s.cfg.Auth.describe(card)
	return card
}

// toolSkills describes each tool of the agent as a skill.
func (s *Server) toolSkills(ctx context.Context) []a2ago.AgentSkill {
	var out []a2ago.AgentSkill
	var toolsets []agent.Toolset
	if ta, ok := s.cfg.Agent.(interface{ Toolsets() []agent.Toolset }); ok {
		toolsets = ta.Toolsets()
	}
	for _, ts := range toolsets {
		tools, err := ts.Tools(ctx)
		if err != nil {
			continue
		}
		for _, t := range tools {
			sp := t.Spec()
			out = append(out, a2ago.AgentSkill{ID: sp.Name, Name: sp.Name, Description: sp.Description,
				Tags: []string{string(sp.Source.Kind)}})
		}
	}
	if len(out) == 0 {
		out = []a2ago.AgentSkill{{ID: "chat", Name: "chat", Description: "Answers questions in conversation.", Tags: []string{"chat"}}}
	}
	return out
}

func (s *Server) serveCard(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	if r.Method == http.MethodOptions {
		w.Header().Set("Access-Control-Allow-Methods", "GET, OPTIONS")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	b, err := cardJSON(r.Context(), s.Card(r.Context(), s.baseURL(r)))
	if err != nil {
		s.pol().Handle(r.Context(), &failure.Error{Kind: failure.Internal, Source: failure.SourceA2A, Op: "card", Err: err})
		http.Error(w, "agent card unavailable", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(b)
}
