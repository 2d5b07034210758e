package main

import (
	"bufio"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/a2a"
	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/anthropic"
	"github.com/switchboard-dev/switchboard/llm/provider/gemini"
	"github.com/switchboard-dev/switchboard/llm/provider/ollama"
	"github.com/switchboard-dev/switchboard/llm/provider/openai"
	"github.com/switchboard-dev/switchboard/mcp"
	"github.com/switchboard-dev/switchboard/skills"
)

//go:embed skills
var builtinSkills embed.FS

// world is everything the demo starts, and how to stop it.
type world struct {
	o       options
	tr      *tracer
	log     zerolog.Logger
	policy  failure.Policy
	bus     *bus.Bus
	mcp     *mcp.Manager
	skills  *skills.Toolset
	peers   *a2a.Toolset
	server  *a2a.Server
	http    *http.Server
	agent   *agent.Agent
	model   llm.Model
	dir     string
	stdin   *bufio.Reader
	closers []func()
	// tools maps call ids to tool names, for labelling progress bars.
	tools sync.Map
	// sent and drawn count progress reports per call: produced by the run,
	// and drawn from the bus.
	progressMu  sync.Mutex
	sent, drawn map[string]int
}

func newWorld(ctx context.Context, o options, stdout io.Writer, stdin io.Reader, stderr io.Writer) (_ *world, err error) {
	w := &world{o: o, tr: newTracer(stdout, o.color, o.json), log: zerolog.Nop(), stdin: bufio.NewReader(stdin),
		sent: map[string]int{}, drawn: map[string]int{}}
	defer func() {
		if err != nil {
			w.close()
		}
	}()
	if o.verbose {
		w.log = zerolog.New(zerolog.ConsoleWriter{Out: stderr, TimeFormat: "15:04:05.000"}).With().Timestamp().Logger()
	}
	// The one failure policy of every component. Each failure it handles is
	// also published on the bus (<prefix>.failures), once the bus is up.
	var reporter atomic.Pointer[bus.Bus]
	w.policy = failure.NewPolicy(failure.PolicyConfig{Logger: &w.log, InitialBackoff: 100 * time.Millisecond,
		OnRetry: func(_ context.Context, key failure.Key, err error, d time.Duration) { w.tr.retry(key.String(), err, d) },
		OnFailure: func(ctx context.Context, o failure.Outcome) {
			if b := reporter.Load(); b != nil {
				b.ReportFailure(ctx, o)
			}
		}})

	w.model, err = chooseModel(ctx, o.model)
	if err != nil {
		return nil, err
	}
	if w.model == nil {
		w.tr.say("%s %s", w.tr.paint("1;33", "Model:"), llm.NewScripted().Name())
		w.tr.say("  This run is offline and deterministic. To use a real model: OPENAI_API_KEY=… (or ANTHROPIC_API_KEY=…) go run ./cmd/demo -model env")
	} else {
		w.tr.say("%s %s", w.tr.paint("1;33", "Model:"), w.model.Name())
	}

	// 1. The bus: an embedded NATS server, in-process, JetStream on.
	w.bus, err = bus.New(ctx, bus.Config{Policy: w.policy, Logger: &w.log})
	if err != nil {
		return nil, fmt.Errorf("starting the bus: %w", err)
	}
	w.closers = append(w.closers, func() { _ = w.bus.Close() })
	reporter.Store(w.bus)
	w.tr.step("bus: embedded NATS server running in-process (JetStream on), subjects under %q", w.bus.Prefix())

	// Responders on the bus: permission asks and other questions, and
	// sampling for MCP servers that ask for the host's model.
	elicit, err := w.bus.ServeElicitation(ctx, agent.ElicitorFunc(w.answer), bus.ServeOptions{})
	if err != nil {
		return nil, err
	}
	w.closers = append(w.closers, func() { _ = elicit.Close() })
	sampler, err := bus.NewModelSampler(bus.ModelSamplerConfig{Model: w.scriptOr([]llm.Step{llm.Say("(scripted sample)")}), Policy: agent.Allow, MaxTokens: 1024})
	if err != nil {
		return nil, err
	}
	sampling, err := w.bus.ServeSampling(ctx, sampler, bus.ServeOptions{})
	if err != nil {
		return nil, err
	}
	w.closers = append(w.closers, func() { _ = sampling.Close() })
	w.tr.step("bus: elicitation responder (permission asks: %s) and sampling responder ready", w.askMode())

	// 2. MCP: the demo's file server (Go, in-process) and any configured.
	if err := w.startMCP(ctx); err != nil {
		return nil, err
	}
	// 3. Skills: the built-in skill, and a folder if given.
	roots := []skills.Root{}
	if o.skillsDir != "" {
		roots = append(roots, skills.Root{Path: o.skillsDir, Label: "flag"})
	}
	roots = append(roots, skills.Root{FS: builtinSkills, Dir: "skills", Label: "builtin"})
	w.skills, err = skills.New(ctx, skills.Config{Roots: roots, Policy: w.policy, Logger: &w.log})
	if err != nil {
		return nil, fmt.Errorf("loading skills: %w", err)
	}
	w.closers = append(w.closers, func() { _ = w.skills.Close() })
	var names []string
	for _, s := range w.skills.Skills() {
		names = append(names, s.Name)
	}
	w.tr.step("skills: %d loaded (%s); only their names and descriptions are in the prompt until activated", len(names), strings.Join(names, ", "))

	// 4. A2A: a second agent served as a peer on a loopback port.
	if err := w.startPeer(ctx); err != nil {
		return nil, err
	}

	// 5. The main agent.
	w.agent, err = agent.New(ctx, agent.Config{
		Name:         "switchboard-demo",
		Description:  "Prepares reports from workspace files, with help from a research agent.",
		Model:        w.mainModel(),
		Instructions: "You prepare short reports. Use the tools; ask the researcher agent for facts you lack.",
		Toolsets:     []agent.Toolset{w.mcp.Toolset(), w.skills, w.peers},
		Events:       w.bus,
		Elicitor:     w.bus.Elicitor(),
		Policy:       w.policy,
		Logger:       &w.log,
		Permissions:  &agent.Permissions{Rules: []agent.Rule{{Tool: "a2a__*", Permission: agent.Allow}, {Tool: "activate_skill", Permission: agent.Allow}}},
		ToolTimeout:  time.Minute,
		Prices:       w.prices(),
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// chooseModel returns the scripted model or a real provider.
func chooseModel(ctx context.Context, which string) (llm.Model, error) {
	switch which {
	case "", "scripted":
		return nil, nil
	case "env":
		return provider.FromEnv(openai.Provider(), anthropic.Provider(), gemini.Provider(), ollama.Provider())
	}
	return nil, fmt.Errorf("-model %q: want scripted or env", which)
}

// pricedAs is the model whose published price the demo gives its scripted
// model, so that the summary shows what the run would have cost there.
const pricedAs = "openai/gpt-4o-mini"

// prices is the main agent's price table: the defaults for a real model;
// for the scripted one, the defaults and pricedAs's price under the
// scripted model's name.
func (w *world) prices() llm.Prices {
	if w.model != nil {
		return nil
	}
	p, _ := llm.DefaultPrices().Lookup(pricedAs)
	return llm.DefaultPrices().With(llm.Prices{llm.NewScripted().Name(): p})
}

// mainModel is the main agent's model: options.mainModel, the real model,
// or the main script.
func (w *world) mainModel() llm.Model {
	if w.o.mainModel != nil {
		return w.o.mainModel
	}
	return w.scriptOr(mainScript("a2a__researcher"))
}

// scriptOr returns the world's real model, or a scripted one playing steps.
func (w *world) scriptOr(steps []llm.Step) llm.Model {
	if w.model != nil {
		return w.model
	}
	return llm.NewScripted(steps...)
}

func (w *world) startMCP(ctx context.Context) error {
	w.dir = filepath.Join(os.TempDir(), fmt.Sprintf("switchboard-demo-%d", os.Getpid()))
	if err := os.MkdirAll(filepath.Join(w.dir, "archive"), 0o755); err != nil {
		return err
	}
	w.closers = append(w.closers, func() { _ = os.RemoveAll(w.dir) })
	for name, text := range map[string]string{"notes.md": notes, "archive/q2.md": "# Q2\n- Billing migration started.\n", "archive/q3.md": "# Q3\n- Cache rollout.\n"} {
		if err := os.WriteFile(filepath.Join(w.dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	srv, err := newFilesServer(w.dir, w.o.step)
	if err != nil {
		return err
	}
	servers := []mcp.ServerConfig{{Name: "files", Server: srv}}
	if w.o.mcpConfig != "" {
		more, err := mcp.LoadFile(w.o.mcpConfig)
		if err != nil {
			return err
		}
		servers = append(servers, more...)
	}
	w.mcp, err = mcp.New(ctx, mcp.Config{Servers: servers, Policy: w.policy, Logger: &w.log,
		Sampler: w.bus.Sampler(), Elicitor: w.bus.Elicitor()})
	if err != nil {
		return fmt.Errorf("starting MCP: %w", err)
	}
	w.closers = append(w.closers, func() { _ = w.mcp.Close() })
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := w.mcp.WaitReady(wctx); err != nil {
		w.tr.step("mcp: some servers are not ready: %v", err)
	}
	for _, st := range w.mcp.Status() {
		w.tr.step("mcp: server %q %s", st.Name, describeStatus(st))
	}
	return nil
}

func describeStatus(st mcp.Status) string {
	s := string(st.State)
	if st.Tools > 0 {
		s += fmt.Sprintf(", %d tools", st.Tools)
	}
	if st.Protocol != "" {
		s += ", protocol " + st.Protocol
	}
	if st.Err != nil {
		s += ": " + st.Err.Error()
	}
	return s
}

// startPeer serves a research agent over A2A on a loopback port, and makes
// it (and -peer) the main agent's delegation tools.
func (w *world) startPeer(ctx context.Context) error {
	researcher, err := agent.New(ctx, agent.Config{
		Name:        "researcher",
		Description: "Finds and summarises recent findings on engineering topics.",
		Model:       w.scriptOr(researcherScript()),
		Tools:       []agent.Tool{searchTool(w.o.step)},
		Events:      w.bus,
		Policy:      w.policy,
		Logger:      &w.log,
	})
	if err != nil {
		return err
	}
	w.server, err = a2a.NewServer(ctx, a2a.ServerConfig{Agent: researcher, Policy: w.policy, Logger: &w.log})
	if err != nil {
		return err
	}
	w.closers = append(w.closers, func() { _ = w.server.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	var handler http.Handler = w.server.Handler()
	if w.o.inject {
		handler = failOnce(handler)
	}
	w.http = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = w.http.Serve(ln) }()
	w.closers = append(w.closers, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = w.http.Shutdown(sctx)
	})
	url := "http://" + ln.Addr().String()
	w.tr.step("a2a: agent %q served over JSON-RPC and HTTP+JSON at %s", researcher.Name(), url)

	peers := []a2a.Peer{{Name: "researcher", URL: url}}
	if w.o.peerURL != "" {
		peers = append(peers, a2a.Peer{Name: "remote", URL: w.o.peerURL})
	}
	w.peers, err = a2a.NewToolset(ctx, a2a.ToolsetConfig{Peers: peers, Policy: w.policy, Logger: &w.log, Bus: w.bus})
	if err != nil {
		return fmt.Errorf("connecting A2A peers: %w", err)
	}
	w.closers = append(w.closers, func() { _ = w.peers.Close() })
	for _, p := range peers {
		if card, ok := w.peers.Card(p.Name); ok {
			w.tr.step("a2a: peer %q resolved from its agent card (%q)", p.Name, card.Name)
		}
	}
	return nil
}

// failOnce answers the first message request with 503: the injected
// transient failure the policy retries.
func failOnce(next http.Handler) http.Handler {
	var failed atomic.Bool
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && failed.CompareAndSwap(false, true) {
			http.Error(rw, "injected failure: service unavailable", http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(rw, r)
	})
}

func (w *world) askMode() string {
	if w.o.interactive {
		return "asked on this terminal"
	}
	return "approved automatically, not a terminal"
}

// answer is the demo's elicitation responder, reached over the bus.
func (w *world) answer(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
	if e.Kind != agent.ElicitPermission {
		w.tr.ask(e.Message, "declined (the demo answers only permission questions)")
		return agent.ElicitationResult{Action: agent.ElicitDecline, Reason: "the demo answers only permission questions"}, nil
	}
	q := fmt.Sprintf("allow %s %s?", e.Tool, oneLine(string(e.Args), 50))
	if !w.o.interactive {
		w.tr.ask(q, "approved automatically (not a terminal)")
		return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
	}
	w.tr.say("  %s %s [y/N] ", w.tr.paint("35", "? permission:"), q)
	line, err := w.stdin.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return agent.ElicitationResult{}, err
	}
	if a := strings.ToLower(strings.TrimSpace(line)); a == "y" || a == "yes" {
		w.tr.ask(q, "approved")
		return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
	}
	w.tr.ask(q, "declined")
	return agent.ElicitationResult{Action: agent.ElicitDecline, Reason: "declined at the terminal"}, nil
}

// close stops everything, in reverse order of starting.
func (w *world) close() {
	for i := len(w.closers) - 1; i >= 0; i-- {
		w.closers[i]()
	}
	w.closers = nil
}
