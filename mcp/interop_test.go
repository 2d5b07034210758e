package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// everythingHTTP starts server-everything in Streamable HTTP mode and
// returns its endpoint; the process is stopped when the test ends.
func everythingHTTP(t *testing.T, nodeModules string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	cmd := exec.Command("node", filepath.Join(nodeModules, "@modelcontextprotocol", "server-everything", "dist", "index.js"), "streamableHttp")
	cmd.Env = append(cmd.Environ(), fmt.Sprintf("PORT=%d", port))
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		killProcessGroup(cmd)
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	testkit.WaitFor(t, 30*time.Second, "server-everything to listen on "+addr, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	})
	return "http://" + addr + "/mcp"
}

// recorder collects what servers push to the host.
type recorder struct {
	mu      sync.Mutex
	logs    []LogMessage
	updates []string
	elicits []agent.Elicitation
	samples []agent.SamplingRequest
}

func (r *recorder) has(f func() bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return f()
}

// newTestBus starts an embedded bus with a sampling responder (a scripted
// model) and an elicitation responder that accepts forms and URLs.
func newTestBus(t *testing.T, rec *recorder) *bus.Bus {
	t.Helper()
	ctx := context.Background()
	b, err := bus.New(ctx, bus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	model := llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		return llm.Say("bus model says: " + req.Messages[len(req.Messages)-1].Text)
	}))
	sampler, err := bus.NewModelSampler(bus.ModelSamplerConfig{Model: model, Policy: agent.Allow})
	if err != nil {
		t.Fatal(err)
	}
	recSampler := testkit.SamplerFunc(func(ctx context.Context, req agent.SamplingRequest) (agent.SamplingResult, error) {
		rec.mu.Lock()
		rec.samples = append(rec.samples, req)
		rec.mu.Unlock()
		return sampler.Sample(ctx, req)
	})
	if _, err := b.ServeSampling(ctx, recSampler, bus.ServeOptions{}); err != nil {
		t.Fatal(err)
	}
	elicitor := agent.ElicitorFunc(func(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
		rec.mu.Lock()
		rec.elicits = append(rec.elicits, e)
		rec.mu.Unlock()
		if e.Kind == agent.ElicitURL {
			return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
		}
		return agent.ElicitationResult{Action: agent.ElicitAccept, Content: map[string]any{"name": "Ada Lovelace", "check": true, "email": "ada@example.com"}}, nil
	})
	if _, err := b.ServeElicitation(ctx, elicitor, bus.ServeOptions{}); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestInteropEverything(t *testing.T) {
	nm := npmDir(t)
	entry := filepath.Join(nm, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			rec := &recorder{}
			b := newTestBus(t, rec)
			root := t.TempDir()
			sc := ServerConfig{Name: "everything", Roots: []string{root}}
			if transport == "stdio" {
				sc.Command, sc.Args = "node", []string{entry}
			} else {
				sc.URL = everythingHTTP(t, nm)
			}
			cfg := quickConfig(sc)
			cfg.StartupTimeout = 30 * time.Second
			cfg.Sampler, cfg.Elicitor = b.Sampler(), b.Elicitor()
			cfg.OnLog = func(_ context.Context, msg LogMessage) {
				rec.mu.Lock()
				rec.logs = append(rec.logs, msg)
				rec.mu.Unlock()
			}
			cfg.OnResourceUpdated = func(_ context.Context, server, uri string) {
				rec.mu.Lock()
				rec.updates = append(rec.updates, server+" "+uri)
				rec.mu.Unlock()
			}
			m := newManager(t, cfg)
			if st := m.Status()[0]; st.State != stateReady {
				t.Fatalf("status %+v", st)
			}
			testEverything(t, m, b, rec, root)
		})
	}
}

func testEverything(t *testing.T, m *Manager, b *bus.Bus, rec *recorder, root string) {
	ctx := context.Background()
	call := func(t *testing.T, tool, args string) *agent.Result {
		t.Helper()
		res, err := m.CallTool(ctx, "everything", tool, json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if res.IsError {
			t.Fatalf("%s: error result %s", tool, res.Text())
		}
		return res
	}
	partTypes := func(r *agent.Result) []string {
		var out []string
		for _, p := range r.Parts {
			out = append(out, p.Type)
		}
		return out
	}
	tools, _ := m.Toolset().Tools(ctx)
	offered := map[string]bool{}
	for _, tl := range tools {
		if tl.Spec().Source.Kind == failure.SourceMCP && tl.Spec().Source.Tool != "" {
			offered[tl.Spec().Source.Tool] = true
			if want := modelToolName("everything", tl.Spec().Source.Tool); tl.Spec().Name != want {
				t.Errorf("tool named %q, want %q", tl.Spec().Name, want)
			}
		}
	}
	covered := map[string]bool{}
	cases := []struct {
		tool  string
		args  string
		check func(t *testing.T, r *agent.Result)
	}{
		{"echo", `{"message":"hello"}`, func(t *testing.T, r *agent.Result) {
			if r.Text() != "Echo: hello" {
				t.Errorf("got %q", r.Text())
			}
		}},
		{"get-sum", `{"a":2,"b":40}`, func(t *testing.T, r *agent.Result) {
			if !strings.Contains(r.Text(), "42") {
				t.Errorf("got %q", r.Text())
			}
		}},
		{"get-env", `{}`, func(t *testing.T, r *agent.Result) {
			if !strings.Contains(r.Text(), "PATH") {
				t.Errorf("got %.200q", r.Text())
			}
		}},
		{"get-tiny-image", `{}`, func(t *testing.T, r *agent.Result) {
			if !slices.Contains(partTypes(r), agent.PartImage) {
				t.Errorf("parts %v", partTypes(r))
			}
			for _, p := range r.Parts {
				if p.Type == agent.PartImage && (p.MIMEType != "image/png" || len(p.Data) < 50) {
					t.Errorf("image %s %d bytes", p.MIMEType, len(p.Data))
				}
			}
		}},
		{"get-annotated-message", `{"messageType":"error","includeImage":true}`, func(t *testing.T, r *agent.Result) {
			if pt := partTypes(r); !slices.Contains(pt, agent.PartText) || !slices.Contains(pt, agent.PartImage) {
				t.Errorf("parts %v", pt)
			}
		}},
		{"get-resource-links", `{"count":3}`, func(t *testing.T, r *agent.Result) {
			n := 0
			for _, p := range r.Parts {
				if p.Type == agent.PartResourceLink && p.URI != "" {
					n++
				}
			}
			if n != 3 {
				t.Errorf("%d resource links, parts %v", n, partTypes(r))
			}
		}},
		{"get-resource-reference", `{"resourceType":"Text","resourceId":2}`, func(t *testing.T, r *agent.Result) {
			if !slices.Contains(partTypes(r), agent.PartResource) {
				t.Errorf("parts %v", partTypes(r))
			}
		}},
		{"get-structured-content", `{"location":"Chicago"}`, func(t *testing.T, r *agent.Result) {
			last := r.Parts[len(r.Parts)-1]
			if last.Type != agent.PartJSON || !json.Valid(last.JSON) || !strings.Contains(string(last.JSON), "temperature") {
				t.Errorf("structured part %+v", last)
			}
		}},
		{"gzip-file-as-resource", `{"name":"hello.txt.gz","data":"data:text/plain;base64,aGVsbG8gd29ybGQ=","outputType":"resource"}`, func(t *testing.T, r *agent.Result) {
			if !slices.Contains(partTypes(r), agent.PartResource) {
				t.Errorf("parts %v", partTypes(r))
			}
		}},
		{"get-roots-list", `{}`, func(t *testing.T, r *agent.Result) {
			if !strings.Contains(r.Text(), filepath.Base(root)) {
				t.Errorf("roots answer %q does not name the granted root %s", r.Text(), root)
			}
		}},
		{"trigger-sampling-request", `{"prompt":"what is MCP?","maxTokens":50}`, func(t *testing.T, r *agent.Result) {
			if !strings.Contains(r.Text(), "bus model says: ") || !strings.Contains(r.Text(), "what is MCP?") || !strings.Contains(r.Text(), `"endTurn"`) {
				t.Errorf("got %q", r.Text())
			}
			if !rec.has(func() bool {
				return len(rec.samples) > 0 && rec.samples[0].MaxTokens == 50 && rec.samples[0].Source.Name == "everything"
			}) {
				t.Errorf("sampling request not seen as sent: %+v", rec.samples)
			}
		}},
		{"trigger-elicitation-request", `{}`, func(t *testing.T, r *agent.Result) {
			if !strings.Contains(r.Text(), "Ada Lovelace") {
				t.Errorf("got %q", r.Text())
			}
			if !rec.has(func() bool {
				return len(rec.elicits) > 0 && rec.elicits[0].Kind == agent.ElicitForm && len(rec.elicits[0].Schema) > 0
			}) {
				t.Errorf("elicitations %+v", rec.elicits)
			}
		}},
		{"trigger-url-elicitation", `{"url":"https://example.com/consent"}`, func(t *testing.T, r *agent.Result) {
			if !rec.has(func() bool {
				return slices.ContainsFunc(rec.elicits, func(e agent.Elicitation) bool {
					return e.Kind == agent.ElicitURL && e.URL == "https://example.com/consent"
				})
			}) {
				t.Errorf("no URL elicitation reached the bus: %+v", rec.elicits)
			}
		}},
		{"toggle-simulated-logging", `{}`, func(t *testing.T, r *agent.Result) {
			waitFor(t, "a server log message", func() bool { return rec.has(func() bool { return len(rec.logs) > 0 }) })
			call(t, "toggle-simulated-logging", `{}`)
		}},
		{"toggle-subscriber-updates", `{}`, func(t *testing.T, r *agent.Result) {
			waitFor(t, "a resources/updated notification", func() bool {
				return rec.has(func() bool {
					return slices.Contains(rec.updates, "everything demo://resource/static/document/architecture.md")
				})
			})
			call(t, "toggle-subscriber-updates", `{}`)
		}},
	}
	// Subscribing first makes toggle-subscriber-updates send an update.
	var firstURI string
	for r, err := range m.Resources(ctx, "everything") {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(r.URI, "architecture.md") {
			firstURI = r.URI
		}
	}
	if firstURI == "" {
		t.Fatal("no architecture.md resource")
	}
	if err := m.Subscribe(ctx, "everything", firstURI); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			covered[c.tool] = true
			if !offered[c.tool] {
				t.Fatalf("server does not offer %s (offered %v)", c.tool, offered)
			}
			c.check(t, call(t, c.tool, c.args))
		})
	}
	t.Run("trigger-long-running-operation through the agent, progress on the bus", func(t *testing.T) {
		covered["trigger-long-running-operation"] = true
		testLongRunning(t, m, b)
	})
	t.Run("simulate-research-query", func(t *testing.T) {
		covered["simulate-research-query"] = true
		if !offered["simulate-research-query"] {
			t.Skip("not offered to this client")
		}
		// The tool needs the experimental tasks API, which go-sdk v1.8.0
		// does not speak: whatever happens must be a result or a typed
		// failure, never a hang.
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		res, err := m.CallTool(cctx, "everything", "simulate-research-query", json.RawMessage(`{"topic":"mcp"}`))
		if err != nil {
			var fe interface{ Unwrap() error }
			if !errors.As(err, &fe) {
				t.Fatalf("untyped error %v", err)
			}
			t.Logf("typed failure: %v", err)
			return
		}
		t.Logf("result (error=%v): %.200s", res.IsError, res.Text())
	})
	for name := range offered {
		if !covered[name] {
			t.Errorf("tool %s is offered but not tested", name)
		}
	}
	t.Run("resources paginated, templates, read text and blob", func(t *testing.T) {
		n := 0
		for _, err := range m.Resources(ctx, "everything") {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n < 2 {
			t.Fatalf("%d resources", n)
		}
		var templates []string
		for tp, err := range m.ResourceTemplates(ctx, "everything") {
			if err != nil {
				t.Fatal(err)
			}
			templates = append(templates, tp.URITemplate)
		}
		if len(templates) < 2 {
			t.Fatalf("templates %v", templates)
		}
		text, err := m.ReadResource(ctx, "everything", "demo://resource/dynamic/text/1")
		if err != nil || len(text) != 1 || text[0].Text == "" {
			t.Fatalf("text resource %+v %v", text, err)
		}
		blob, err := m.ReadResource(ctx, "everything", "demo://resource/dynamic/blob/1")
		if err != nil || len(blob) != 1 || len(blob[0].Data) == 0 {
			t.Fatalf("blob resource %+v %v", blob, err)
		}
		if err := m.Unsubscribe(ctx, "everything", firstURI); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("prompts with arguments and completions", func(t *testing.T) {
		var names []string
		for p, err := range m.Prompts(ctx, "everything") {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, p.Name)
		}
		if !slices.Contains(names, "args-prompt") {
			t.Fatalf("prompts %v", names)
		}
		p, err := m.GetPrompt(ctx, "everything", "args-prompt", map[string]string{"city": "Lisbon", "state": "Lisboa"})
		if err != nil || len(p.Messages) == 0 || !strings.Contains(p.Messages[0].Text, "Lisbon") {
			t.Fatalf("prompt %+v %v", p, err)
		}
		vals, err := m.Complete(ctx, "everything", "prompt:completable-prompt", "department", "En", nil)
		if err != nil || !slices.Contains(vals, "Engineering") {
			t.Fatalf("completions %v %v", vals, err)
		}
	})
	t.Run("model tools for resources and prompts", func(t *testing.T) {
		byName := map[string]agent.Tool{}
		for _, tl := range tools {
			byName[tl.Spec().Name] = tl
		}
		for _, c := range []struct{ tool, args, want string }{
			{nameListResources, `{"server":"everything"}`, "architecture.md"},
			{nameReadResource, `{"server":"everything","uri":"demo://resource/dynamic/text/3"}`, "3"},
			{nameGetPrompt, `{"server":"everything","name":"args-prompt","arguments":{"city":"Porto"}}`, "Porto"},
		} {
			tl, ok := byName[c.tool]
			if !ok {
				t.Fatalf("no tool %s", c.tool)
			}
			r, err := tl.Call(ctx, json.RawMessage(c.args))
			if err != nil || r.IsError || !strings.Contains(r.Text(), c.want) {
				t.Errorf("%s: %v %v", c.tool, r, err)
			}
		}
	})
}

// testLongRunning runs the long-running tool through an agent whose events
// go to the bus, and reads its progress back from the bus.
func testLongRunning(t *testing.T, m *Manager, b *bus.Bus) {
	ctx := context.Background()
	sub, err := b.SubscribeProgress(ctx, "", bus.ProgressOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	name := modelToolName("everything", "trigger-long-running-operation")
	model := llm.NewScripted(
		llm.Calls(llm.CallTool("c1", name, map[string]any{"duration": 1, "steps": 3})),
		llm.SummarizeResults("done"),
	)
	a, err := agent.New(ctx, agent.Config{Model: model, Toolsets: []agent.Toolset{m.Toolset()}, Events: b})
	if err != nil {
		t.Fatal(err)
	}
	var progress []agent.Progress
	var final string
	for ev, err := range a.Stream(ctx, "run the long operation") {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case agent.EventToolProgress:
			progress = append(progress, *ev.Progress)
		case agent.EventToolFinished:
			if ev.Result.IsError {
				t.Fatalf("tool failed: %s", ev.Result.Text())
			}
		case agent.EventFinal:
			final = ev.Text
		}
	}
	// Over HTTP the last notification may be handled after the result has
	// been delivered (go-sdk runs notification handlers asynchronously), so
	// it can miss the call; the earlier ones cannot.
	if len(progress) < 2 {
		t.Fatalf("progress events %+v", progress)
	}
	for i, p := range progress {
		if p.Progress != float64(i+1) || p.Total != 3 {
			t.Fatalf("progress events %+v", progress)
		}
	}
	if !strings.Contains(final, "1 tool results, 0 errors") {
		t.Fatalf("final %q", final)
	}
	nctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for i := range progress {
		u, err := sub.Next(nctx)
		if err != nil {
			t.Fatalf("progress %d on the bus: %v", i, err)
		}
		if u.Call != "c1" || u.Total != 3 {
			t.Fatalf("bus progress %+v", u)
		}
	}
}
