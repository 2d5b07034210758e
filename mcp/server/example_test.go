package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/mcp"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

// A Go tool served over Streamable HTTP and called by a go-sdk client.
func ExampleServer_Handler() {
	ctx := context.Background()
	add := agent.TypedTool(agent.ToolSpec{Name: "add", Description: "Adds two numbers.", ReadOnly: true},
		func(ctx context.Context, in addArgs) (int, error) { return in.A + in.B, nil })
	srv, err := server.New(ctx, server.Config{Name: "calculator", Toolsets: []agent.Toolset{agent.NewToolset("calc", add)}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	client := gomcp.NewClient(&gomcp.Implementation{Name: "example", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &gomcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*gomcp.TextContent).Text)
	// Output: 5
}

// A toolset served over one session, as `switchboard mcp serve` serves
// stdio; in-memory transports stand in for stdin and stdout. Run returns
// when the client closes the session.
func ExampleServer_Run() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	echo := agent.TypedTool(agent.ToolSpec{Name: "echo", Description: "Echoes its input.", ReadOnly: true},
		func(ctx context.Context, in struct {
			Text string `json:"text"`
		}) (string, error) {
			return in.Text, nil
		})
	srv, err := server.New(ctx, server.Config{Toolsets: []agent.Toolset{agent.NewToolset("echo", echo)}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	serverT, clientT := gomcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, serverT) }()

	cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "example", Version: "1"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range tools.Tools {
		fmt.Println(t.Name, t.Annotations.ReadOnlyHint)
	}
	cs.Close()
	<-done
	// Output: echo true
}

// A go-sdk server fronted transparently (Config.Servers): a client sees
// its tool under its own name (one server: no prefix) with its _meta,
// and reads the ui:// resource the _meta names.
func ExampleConfig_servers() {
	ctx := context.Background()
	client := new(server.Client)
	m, err := mcp.New(ctx, mcp.Config{Servers: []mcp.ServerConfig{{Name: "app", Server: appServer()}},
		Elicitor: client.Elicitor(), Sampler: client.Sampler(), OnLog: client.Log, OnResourceUpdated: client.ResourceUpdated})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	srv, err := server.New(ctx, server.Config{Servers: m, Client: client, Permissions: agent.AllowAll()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "host"}, nil).Connect(ctx, &gomcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	uri := tools.Tools[0].Meta["ui"].(map[string]any)["resourceUri"].(string)
	res, err := cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: uri})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tools.Tools[0].Name, tools.Tools[0].Title, uri)
	fmt.Println(res.Contents[0].MIMEType, res.Contents[0].Text)
	// Output:
	// get-time Get the time ui://app/clock.html
	// text/html;profile=mcp-app <html>clock</html>
}

// A server that lists find_tools and call_tool instead of its tools: the
// client finds a tool by what it should do, then calls it by name.
func ExampleConfig_findAndCall() {
	ctx := context.Background()
	add := agent.TypedTool(agent.ToolSpec{Name: "add", Description: "Adds two numbers.", ReadOnly: true},
		func(ctx context.Context, in addArgs) (int, error) { return in.A + in.B, nil })
	srv, err := server.New(ctx, server.Config{Toolsets: []agent.Toolset{agent.NewToolset("calc", add)}, FindAndCall: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	st, ct := gomcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ss.Close()
	cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "example", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	list, _ := cs.ListTools(ctx, nil)
	for _, t := range list.Tools {
		fmt.Println("listed:", t.Name)
	}
	found, _ := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "add numbers"}})
	fmt.Println(found.Content[0].(*gomcp.TextContent).Text)
	res, _ := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "add", "arguments": map[string]any{"a": 2, "b": 3}}})
	fmt.Println(res.Content[0].(*gomcp.TextContent).Text)
	// Output:
	// listed: call_tool
	// listed: find_tools
	// {"tools":[{"name":"add","description":"Adds two numbers.","inputSchema":{"type":"object"},"why":"matched add, number"}]}
	// 5
}

// An agent served with tasks (Config.Tasks): a Manager's call of it is
// answered with a task, which the Manager polls to the agent's answer.
// A durable agent calling through the Manager records the task with its
// call, and a resumed run polls on (docs/tasks.md).
func ExampleConfig_tasks() {
	ctx := context.Background()
	researcher, err := agent.New(ctx, agent.Config{Name: "researcher", Description: "researches",
		Model: llm.NewScripted(llm.Say("three sources agree"))})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv, err := server.New(ctx, server.Config{Runners: []agent.Runner{researcher},
		Tasks: agent.NewMemoryStore(agent.MemoryStoreOptions{})}) // bus/store.OpenAgent for JetStream
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	m, err := mcp.New(ctx, mcp.Config{Servers: []mcp.ServerConfig{{Name: "team", Type: "http", URL: hs.URL}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	res, err := m.CallTool(ctx, "team", "researcher", json.RawMessage(`{"input":"is it true?"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Parts[0].Text)
	// Output: three sources agree
}
