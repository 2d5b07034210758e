package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/a2a"
	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/llm"
)

// Options configures the pipeline.
type Options struct {
	// Answer answers the questions the researcher asks (over the bus). Nil
	// declines them.
	Answer func(question string) string
	// Logger receives logs (nil: none).
	Logger *zerolog.Logger
}

// Pipeline is two agents: a planner that delegates over A2A to a
// researcher served on a local HTTP port, sharing one embedded bus.
type Pipeline struct {
	Bus        *bus.Bus
	Planner    *agent.Agent
	Researcher *a2a.Server
	Peers      *a2a.Toolset
	URL        string

	http *http.Server
	done chan error
}

// Start builds and starts the pipeline.
func Start(ctx context.Context, opts Options) (p *Pipeline, err error) {
	p = &Pipeline{done: make(chan error, 1)}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	if p.Bus, err = bus.New(ctx, bus.Config{Logger: opts.Logger}); err != nil {
		return nil, err
	}
	// The researcher: asks its client through A2A input-required.
	researcher, err := agent.New(ctx, agent.Config{Name: "researcher", Description: "Researches topics; asks when a detail is missing.",
		Model: researcherModel(), Tools: researcherTools(), Permissions: agent.AllowAll(),
		Elicitor: a2a.TaskElicitor(nil), Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.URL = "http://" + ln.Addr().String()
	if p.Researcher, err = a2a.NewServer(ctx, a2a.ServerConfig{Agent: researcher, URL: p.URL, Logger: opts.Logger}); err != nil {
		ln.Close()
		return nil, err
	}
	p.http = &http.Server{Handler: p.Researcher, ReadHeaderTimeout: 10 * time.Second}
	go func() { p.done <- p.http.Serve(ln) }()

	// The planner: its questions, events and the remote tasks go on the bus.
	if opts.Answer != nil {
		answer := opts.Answer
		if _, err := p.Bus.ServeElicitation(ctx, agent.ElicitorFunc(func(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
			return agent.ElicitationResult{Action: agent.ElicitAccept, Content: map[string]any{"text": answer(e.Message)}}, nil
		}), bus.ServeOptions{}); err != nil {
			return nil, err
		}
	}
	if p.Peers, err = a2a.NewToolset(ctx, a2a.ToolsetConfig{Peers: []a2a.Peer{{Name: "researcher", URL: p.URL}},
		Bus: p.Bus, Logger: opts.Logger}); err != nil {
		return nil, err
	}
	p.Planner, err = agent.New(ctx, agent.Config{Name: "planner", Model: plannerModel(),
		Toolsets: []agent.Toolset{p.Peers}, Permissions: agent.AllowAll(), Events: p.Bus, Elicitor: p.Bus.Elicitor(),
		Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Close stops everything.
func (p *Pipeline) Close() {
	if p.Peers != nil {
		_ = p.Peers.Close()
	}
	if p.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = p.http.Shutdown(ctx)
		cancel()
		if err := <-p.done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err
		}
	}
	if p.Researcher != nil {
		_ = p.Researcher.Close()
	}
	if p.Bus != nil {
		_ = p.Bus.Close(context.Background())
	}
}

// plannerModel delegates "delegate <task>" to the researcher and reports
// what came back. It is scripted: the example runs offline.
func plannerModel() llm.Model {
	return llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		if res := llm.LastToolResults(req); len(res) > 0 {
			return llm.Say("Plan, based on the researcher: " + strip(res[0].Content))
		}
		in := lastUser(req)
		if task, ok := strings.CutPrefix(in, "delegate "); ok {
			return llm.Calls(llm.CallTool("d1", a2a.ToolName("researcher", ""), map[string]string{"message": task}))
		}
		return llm.Say("Nothing to delegate in: " + in)
	}))
}

// researcherModel: "research X" calls research, "ask X" asks a question,
// "slow X" works until cancelled.
func researcherModel() llm.Model {
	return llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		if res := llm.LastToolResults(req); len(res) > 0 {
			return llm.Say("Findings: " + strip(res[0].Content))
		}
		word, rest, _ := strings.Cut(lastUser(req), " ")
		switch word {
		case "research", "ask", "slow":
			return llm.Calls(llm.CallTool("r1", word, map[string]string{"topic": rest}))
		}
		return llm.Say("I research topics; say research <topic>.")
	}))
}

func researcherTools() []agent.Tool {
	schema := json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"}},"required":["topic"]}`)
	type in struct {
		Topic string `json:"topic"`
	}
	research := agent.TypedTool(agent.ToolSpec{Name: "research", Description: "Researches a topic.", InputSchema: schema},
		func(ctx context.Context, a in) (string, error) {
			call, _ := agent.CallFromContext(ctx)
			call.ReportProgress(agent.Progress{Progress: 1, Total: 2, Message: "reading sources on " + a.Topic})
			call.ReportProgress(agent.Progress{Progress: 2, Total: 2, Message: "writing notes"})
			return "three facts about " + a.Topic, nil
		})
	ask := agent.TypedTool(agent.ToolSpec{Name: "ask", Description: "Asks the client a question.", InputSchema: schema},
		func(ctx context.Context, a in) (string, error) {
			call, _ := agent.CallFromContext(ctx)
			ans, err := call.Elicit(ctx, agent.Elicitation{Kind: agent.ElicitInput, Message: "Which city for " + a.Topic + "?"})
			if err != nil {
				return "", err
			}
			if ans.Action != agent.ElicitAccept {
				return "no city given", nil
			}
			return fmt.Sprintf("%s in %v", a.Topic, ans.Content["text"]), nil
		})
	slow := agent.TypedTool(agent.ToolSpec{Name: "slow", Description: "Works until cancelled.", InputSchema: schema},
		func(ctx context.Context, a in) (string, error) {
			call, _ := agent.CallFromContext(ctx)
			call.ReportProgress(agent.Progress{Message: "started on " + a.Topic})
			<-ctx.Done()
			return "", ctx.Err()
		})
	return []agent.Tool{research, ask, slow}
}

func lastUser(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].Text
		}
	}
	return ""
}

// strip removes the tool_result envelope.
func strip(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(strings.TrimSuffix(s, "</tool_result>"))
}
