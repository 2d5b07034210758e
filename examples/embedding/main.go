// Command embedding is the wiring README.md shows: an agent on the embedded
// bus, with the MCP servers of ./.mcp.json and the skills folders of the
// project and the user, and a model chosen by the environment.
//
//	OPENAI_API_KEY=… go run ./examples/embedding "Summarise the open issues"
//
// The README's snippet is the code between the readme markers below; a test
// keeps the two identical and runs the code against a local OpenAI-compatible
// server.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/anthropic"
	"github.com/switchboard-dev/switchboard/llm/provider/gemini"
	"github.com/switchboard-dev/switchboard/llm/provider/ollama"
	"github.com/switchboard-dev/switchboard/llm/provider/openai"
	"github.com/switchboard-dev/switchboard/mcp"
	"github.com/switchboard-dev/switchboard/skills"
)

func main() {
	ctx := context.Background()
	a, closeAll, err := newAgent(ctx, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer closeAll()
	ans, err := a.Run(ctx, strings.Join(os.Args[1:], " "))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ans.Text)
}

// readme:begin embedding

// newAgent wires an agent around model (nil: the one the environment
// names) to an embedded NATS bus, the MCP servers of .mcp.json and the
// skills of the project and the user. closeAll releases what it started.
func newAgent(ctx context.Context, model llm.Model) (*agent.Agent, func() error, error) {
	var closers []func() error
	closeAll := func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		return errors.Join(errs...)
	}
	fail := func(err error) (*agent.Agent, func() error, error) {
		return nil, nil, errors.Join(err, closeAll()) // release what started
	}

	b, err := bus.New(ctx, bus.Config{}) // embedded NATS; or URLs: []string{"nats://…"}
	if err != nil {
		return fail(err)
	}
	closers = append(closers, b.Close)
	if model == nil {
		model, err = provider.FromEnv(openai.Provider(), anthropic.Provider(), gemini.Provider(), ollama.Provider()) // OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY or OLLAMA_MODEL
		if err != nil {
			return fail(err)
		}
	}
	servers, err := mcp.LoadFile(".mcp.json") // the file other MCP hosts use
	if err != nil {
		return fail(err)
	}
	m, err := mcp.New(ctx, mcp.Config{Servers: servers, Sampler: b.Sampler(), Elicitor: b.Elicitor()})
	if err != nil {
		return fail(err)
	}
	closers = append(closers, m.Close)
	home, _ := os.UserHomeDir()
	sk, err := skills.New(ctx, skills.Config{Roots: skills.StandardRoots(".", home)})
	if err != nil {
		return fail(err)
	}
	closers = append(closers, sk.Close)
	a, err := agent.New(ctx, agent.Config{
		Model:    model,
		Toolsets: []agent.Toolset{m.Toolset(), sk},
		Events:   b,            // every run event is published on the bus
		Elicitor: b.Elicitor(), // permission asks go to whoever answers on the bus
	})
	if err != nil {
		return fail(err)
	}
	return a, closeAll, nil
}

// ans, err := a.Run(ctx, "Summarise the open issues")  // or
// for ev, err := range a.Stream(ctx, "…") { … }         // iter.Seq2[agent.Event, error]

// readme:end
