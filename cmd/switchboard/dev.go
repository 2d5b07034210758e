package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/guard"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/console"
	"github.com/switchboard-dev/switchboard/bus/store"
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

// devConfig is the agent file of `switchboard dev -config`: the agent's
// name and prompt, its models, and its sources as `mcp serve` takes them
// (paths relative to the file).
type devConfig struct {
	Name         string     `json:"name"`
	Instructions string     `json:"instructions"`
	Model        string     `json:"model"`
	Models       []devModel `json:"models"`
	MCPConfig    string     `json:"mcp_config"`
	Skills       []string   `json:"skills"`
	A2A          []string   `json:"a2a"`
	Allow        []string   `json:"allow"`
	Ask          []string   `json:"ask"`
	Deny         []string   `json:"deny"`
}

// devModel is one model of the agent file: a provider (openai, anthropic,
// gemini, ollama; env for the one the environment configures; scripted
// for an offline echo) and its settings. The API key is read from the
// environment variable APIKeyEnv, never from the file.
type devModel struct {
	Name      string `json:"name"`
	Provider  string `json:"provider"`
	Model     string `json:"model"`
	BaseURL   string `json:"base_url"`
	APIKeyEnv string `json:"api_key_env"`
	Region    string `json:"region"`
}

// devOptions are the flags of `switchboard dev`.
type devOptions struct {
	config, mcpConfig   string
	skillDirs, a2aPeers list
	listen, token       string
	identity            string
	nats, natsCreds     string
	natsToken, natsUser string
	prefix              string
	watch               bool
	parkAfter           time.Duration
	logLevel            string
}

func parseDev(args []string, stderr io.Writer) (*devOptions, error) {
	o := &devOptions{}
	fs := flag.NewFlagSet("switchboard dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.config, "config", "", "the agent file (JSON: name, instructions, model, models, mcp_config, skills, a2a, allow, ask, deny)")
	fs.StringVar(&o.mcpConfig, "mcp-config", "", "an .mcp.json whose servers the agent gets (besides the file's)")
	fs.Var(&o.skillDirs, "skills", "a skills folder the agent gets (repeatable)")
	fs.Var(&o.a2aPeers, "a2a", "an A2A peer the agent gets, name=URL (repeatable)")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:7070", "the console's host:port; beyond loopback it needs -token (one is made when none is given)")
	fs.StringVar(&o.token, "token", os.Getenv("SWITCHBOARD_CONSOLE_TOKEN"), "the token every request needs (default $SWITCHBOARD_CONSOLE_TOKEN)")
	fs.StringVar(&o.identity, "identity", os.Getenv("USER"), "who answers questions from this console (recorded with each answer)")
	fs.StringVar(&o.nats, "nats", "", "attach to this NATS deployment (URLs, comma-separated) instead of an embedded server")
	fs.StringVar(&o.natsCreds, "nats-creds", "", "a NATS .creds file")
	fs.StringVar(&o.natsToken, "nats-token", os.Getenv("NATS_TOKEN"), "a NATS token (default $NATS_TOKEN)")
	fs.StringVar(&o.natsUser, "nats-user", os.Getenv("NATS_USER"), "a NATS user (password from $NATS_PASSWORD)")
	fs.StringVar(&o.prefix, "prefix", "", "the bus's subject prefix (default switchboard)")
	fs.BoolVar(&o.watch, "watch", false, "run no agent: only watch (and answer) the runs on the bus")
	fs.DurationVar(&o.parkAfter, "park-after", 2*time.Minute, "a permission ask unanswered this long parks its run in the inbox (0: never)")
	fs.StringVar(&o.logLevel, "log-level", "info", "log level on stderr: debug, info, warn, error")
	if err := fs.Parse(args); err != nil {
		return nil, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %v\n", fs.Args())
		return nil, errUsage
	}
	if o.config == "" && !o.watch {
		fmt.Fprintln(stderr, "give -config (the agent to run) or -watch (only the bus's runs)")
		return nil, errUsage
	}
	return o, nil
}

// loadDevConfig reads the agent file; relative paths are the file's.
func loadDevConfig(path string) (*devConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var c devConfig
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dir := filepath.Dir(path)
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	c.MCPConfig = rel(c.MCPConfig)
	for i := range c.Skills {
		c.Skills[i] = rel(c.Skills[i])
	}
	if c.Name == "" {
		c.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	if len(c.Models) == 0 {
		c.Models = []devModel{{Name: "env", Provider: "env"}}
	}
	seen := map[string]bool{}
	for i, m := range c.Models {
		if m.Name == "" {
			c.Models[i].Name = m.Provider
		}
		if seen[c.Models[i].Name] {
			return nil, fmt.Errorf("%s: model %q is named twice", path, c.Models[i].Name)
		}
		seen[c.Models[i].Name] = true
	}
	if c.Model == "" {
		c.Model = c.Models[0].Name
	}
	if !seen[c.Model] {
		return nil, fmt.Errorf("%s: model %q is not among models", path, c.Model)
	}
	return &c, nil
}

// devProviders are the providers a model of the agent file may name.
var devProviders = []provider.Provider{openai.Provider(), anthropic.Provider(), gemini.Provider(), ollama.Provider()}

// newModel builds one model of the agent file.
func newModel(m devModel, policy failure.Policy, log *zerolog.Logger) (llm.Model, error) {
	switch m.Provider {
	case "scripted":
		return llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
			return llm.Say("(scripted) you said: " + req.Messages[len(req.Messages)-1].Text)
		})), nil
	case "env", "":
		return provider.FromEnv(devProviders...)
	}
	for _, p := range devProviders {
		if p.Name == m.Provider {
			cfg := provider.Config{Provider: p.Name, BaseURL: m.BaseURL, Model: m.Model, Region: m.Region, Policy: policy, Logger: log}
			if m.APIKeyEnv != "" {
				cfg.APIKey = os.Getenv(m.APIKeyEnv)
			}
			return p.New(cfg)
		}
	}
	return nil, fmt.Errorf("model %q: unknown provider %q (want openai, anthropic, gemini, ollama, env or scripted)", m.Name, m.Provider)
}

// devForker forks runs with the agent file's models and a changed prompt.
type devForker struct {
	base   agent.Config
	models map[string]llm.Model
}

func (f *devForker) Fork(ctx context.Context, fk console.Fork) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		cfg := f.base
		if fk.Model != "" {
			m, ok := f.models[fk.Model]
			if !ok {
				yield(agent.Event{}, failure.New(failure.InvalidArgs, failure.SourceAgent, fmt.Sprintf("no model %q in the agent file", fk.Model)))
				return
			}
			cfg.Model = m
		}
		if fk.Instructions != "" {
			cfg.Instructions = fk.Instructions
		}
		a, err := agent.New(ctx, cfg)
		if err != nil {
			yield(agent.Event{}, err)
			return
		}
		for ev, err := range a.NewSessionFrom(fk.History).Stream(ctx, fk.Input) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// runDev runs `switchboard dev` until ctx ends.
func runDev(ctx context.Context, args []string, stderr io.Writer) error {
	o, err := parseDev(args, stderr)
	if err != nil {
		return err
	}
	lvl, err := zerolog.ParseLevel(o.logLevel)
	if err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	log := zerolog.New(stderr).Level(lvl).With().Timestamp().Logger()
	policy := failure.NewPolicy(failure.PolicyConfig{Logger: &log})
	host, _, err := net.SplitHostPort(o.listen)
	if err != nil {
		return fmt.Errorf("-listen %q: %w", o.listen, err)
	}
	if !loopbackHost(host) && o.token == "" {
		o.token = strings.ToLower(rand.Text())
	}
	bcfg := bus.Config{Name: "switchboard-dev", Prefix: o.prefix, Logger: &log, Policy: policy,
		CredsFile: o.natsCreds, Token: o.natsToken, User: o.natsUser, Password: os.Getenv("NATS_PASSWORD")}
	if o.nats != "" {
		bcfg.URLs = strings.Split(o.nats, ",")
	}
	b, err := bus.New(ctx, bcfg)
	if err != nil {
		return err
	}
	defer b.Close()
	ccfg := console.Config{Bus: b, Token: o.token, Identity: o.identity, Logger: &log, Policy: policy}
	var closers []func() error
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			_ = closers[i]()
		}
	}()
	if !o.watch {
		dc, err := loadDevConfig(o.config)
		if err != nil {
			return err
		}
		acfg, models, cl, err := o.agentConfig(ctx, dc, b, policy, &log)
		closers = append(closers, cl...)
		if err != nil {
			return err
		}
		st, err := store.OpenAgent(ctx, b, store.AgentConfig{Policy: policy, Logger: &log})
		if err != nil {
			return err
		}
		acfg.Durable = agent.Durable(st, o.parkAfter)
		a, err := agent.New(ctx, acfg)
		if err != nil {
			return err
		}
		answers, err := b.ServeAnswers(ctx, a, st)
		if err != nil {
			return err
		}
		closers = append(closers, answers.Close)
		ccfg.Runner, ccfg.Inbox, ccfg.Forker = a, st, &devForker{base: acfg, models: models}
		for _, m := range dc.Models {
			ccfg.Models = append(ccfg.Models, m.Name)
		}
	}
	c, err := console.New(ctx, ccfg)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: c.Handler(), ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String() + "/"
	if o.token != "" {
		url += "?token=" + o.token
	}
	log.Info().Str("addr", ln.Addr().String()).Str("url", url).Msg("the console is ready")
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// agentConfig builds the agent of the file and the flags: its models, its
// toolsets (the .mcp.json servers, skills folders and A2A peers, as `mcp
// serve` reads them) and its permissions.
func (o *devOptions) agentConfig(ctx context.Context, dc *devConfig, b *bus.Bus, policy failure.Policy, log *zerolog.Logger) (agent.Config, map[string]llm.Model, []func() error, error) {
	var closers []func() error
	models := map[string]llm.Model{}
	for _, m := range dc.Models {
		mod, err := newModel(m, policy, log)
		if err != nil {
			return agent.Config{}, nil, closers, err
		}
		models[m.Name] = mod
	}
	cfg := agent.Config{Name: dc.Name, Instructions: dc.Instructions, Model: models[dc.Model], Events: b, Elicitor: b.Elicitor(),
		Policy: policy, Logger: log}
	perm := &agent.Permissions{}
	for _, r := range []struct {
		pats []string
		p    agent.Permission
	}{{dc.Allow, agent.Allow}, {dc.Ask, agent.Ask}, {dc.Deny, agent.Deny}} {
		for _, pat := range r.pats {
			perm.Rules = append(perm.Rules, agent.Rule{Tool: pat, Permission: r.p})
		}
	}
	cfg.Permissions = perm
	for _, path := range []string{dc.MCPConfig, o.mcpConfig} {
		if path == "" {
			continue
		}
		servers, err := mcp.LoadFile(path)
		if err != nil {
			return cfg, models, closers, err
		}
		m, err := mcp.New(ctx, mcp.Config{Servers: servers, Policy: policy, Logger: log, Elicitor: b.Elicitor()})
		if err != nil {
			return cfg, models, closers, err
		}
		closers = append(closers, m.Close)
		cfg.Toolsets = append(cfg.Toolsets, m.Toolset())
	}
	if dirs := append(append([]string{}, dc.Skills...), o.skillDirs...); len(dirs) > 0 {
		var roots []skills.Root
		for _, d := range dirs {
			roots = append(roots, skills.Root{Path: d, Label: d})
		}
		sk, err := skills.New(ctx, skills.Config{Roots: roots, Policy: policy, Logger: log, Guards: guard.Named()})
		if err != nil {
			return cfg, models, closers, err
		}
		closers = append(closers, sk.Close)
		cfg.Toolsets = append(cfg.Toolsets, sk)
	}
	if peers := append(append([]string{}, dc.A2A...), o.a2aPeers...); len(peers) > 0 {
		ts, err := a2aToolset(ctx, peers, policy, log)
		if err != nil {
			return cfg, models, closers, err
		}
		cfg.Toolsets = append(cfg.Toolsets, ts)
	}
	return cfg, models, closers, nil
}
