package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/mcp"
)

type greetArgs struct {
	Name string `json:"name"`
}

// An in-process go-sdk server behind a Manager: its tools become agent
// tools named mcp__<server>__<tool>.
func ExampleNew() {
	ctx := context.Background()
	srv := gomcp.NewServer(&gomcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	gomcp.AddTool(srv, &gomcp.Tool{Name: "greet", Description: "Greet someone.", Annotations: &gomcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *gomcp.CallToolRequest, in greetArgs) (*gomcp.CallToolResult, any, error) {
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "Hello, " + in.Name + "!"}}}, nil, nil
		})
	clientT, serverT := gomcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverT, nil)
	if err != nil {
		panic(err)
	}
	defer ss.Close()

	m, err := mcp.New(ctx, mcp.Config{Servers: []mcp.ServerConfig{{Name: "greeter", Transport: clientT}}})
	if err != nil {
		panic(err)
	}
	defer m.Close()

	tools, _ := m.Toolset().Tools(ctx)
	for _, t := range tools {
		s := t.Spec()
		fmt.Printf("%s (source %s, read-only %v)\n", s.Name, s.Source, s.ReadOnly)
	}
	res, err := tools[0].Call(ctx, json.RawMessage(`{"name":"Ada"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text())
	// Output:
	// mcp__greeter__greet (source mcp:greeter:greet, read-only true)
	// mcp_read_result (source mcp, read-only true)
	// Hello, Ada!
}

// Loading the mcpServers JSON other MCP hosts use, with ${VAR} expansion.
func ExampleParseConfig() {
	data := []byte(`{"mcpServers": {
		"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${ROOT:-/srv}"]},
		"api": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}
	}}`)
	env := func(k string) (string, bool) { return map[string]string{"TOKEN": "t0k"}[k], k == "TOKEN" }
	servers, err := mcp.ParseConfig(".mcp.json", data, env)
	if err != nil {
		panic(err)
	}
	for _, s := range servers {
		if s.Type == "stdio" {
			fmt.Println(s.Name, s.Type, s.Command, s.Args)
		} else {
			fmt.Println(s.Name, s.Type, s.URL, s.Headers["Authorization"])
		}
	}
	_, err = mcp.ParseConfig(".mcp.json", []byte(`{"mcpServers": {"x": {"type": "http"}}}`), nil)
	fmt.Println(err)
	// Output:
	// api http https://mcp.example.com/mcp Bearer t0k
	// files stdio npx [-y @modelcontextprotocol/server-filesystem /srv]
	// .mcp.json: server "x": field "url": missing: a http server needs a url
}

// Reading an MCP host's config file; ${VAR} and ${VAR:-default} are
// expanded from the process environment (ParseConfig takes another), and
// timeouts may be milliseconds or Go durations.
func ExampleLoadFile() {
	os.Setenv("API_TOKEN", "t0k") // set by the deployment
	defer os.Unsetenv("API_TOKEN")
	servers, err := mcp.LoadFile("testdata/config/mcp.json")
	if err != nil {
		panic(err)
	}
	for _, s := range servers {
		fmt.Printf("%s: %s %s%s timeout %s\n", s.Name, s.Type, s.URL, s.Command, s.Timeout)
	}
	// Output:
	// api: http https://mcp.example.com/mcp timeout 45s
	// cursor-style: http http://localhost:3000/mcp timeout 0s
	// legacy: sse http://localhost:8080/sse timeout 0s
	// local: stdio ./bin/server timeout 0s
	// socket: ws ws://localhost:9000/mcp timeout 0s
}

// A Manager's toolset given to an agent: the agent calls the in-process
// server's tool under its own failure policy and ToolTimeout, and the
// server's Timeout bounds each call of its tools. Server (rather than
// Transport) lets the manager reconnect the server when its session ends.
func ExampleManager_Toolset() {
	ctx := context.Background()
	srv := gomcp.NewServer(&gomcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	gomcp.AddTool(srv, &gomcp.Tool{Name: "greet", Annotations: &gomcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *gomcp.CallToolRequest, in greetArgs) (*gomcp.CallToolResult, any, error) {
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "Hello, " + in.Name + "!"}}}, nil, nil
		})
	m, err := mcp.New(ctx, mcp.Config{Servers: []mcp.ServerConfig{
		{Name: "greeter", Server: srv, Timeout: 5 * time.Second},
	}})
	if err != nil {
		panic(err)
	}
	defer m.Close()

	model := llm.NewScripted(
		llm.Calls(llm.CallTool("c1", "mcp__greeter__greet", map[string]any{"name": "Ada"})),
		llm.SummarizeResults("The tool said:"),
	)
	a, err := agent.New(ctx, agent.Config{Model: model, Toolsets: []agent.Toolset{m.Toolset()}})
	if err != nil {
		panic(err)
	}
	ans, err := a.Run(ctx, "Greet Ada.")
	if err != nil {
		panic(err)
	}
	fmt.Println(ans.Text)
	// Output:
	// The tool said: (1 tool results, 0 errors)
	// - mcp__greeter__greet: Hello, Ada!
}
