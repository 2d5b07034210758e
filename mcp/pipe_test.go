package mcp

import (
	"context"
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServerOnPipe: a go-sdk client and server talk over lineConns at
// both ends, as the Manager connects an in-process Server.
func TestServerOnPipe(t *testing.T) {
	ctx := context.Background()
	att, err := (&server{cfg: ServerConfig{Name: "pipe", Server: goServer()}}).pipeToServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer att.cleanup()
	cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, att.t, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "über \u2028 \"quoted\""}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*gomcp.TextContent).Text; got != "über \u2028 \"quoted\"" {
		t.Fatalf("echo = %q", got)
	}
	if _, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "nope", Arguments: map[string]any{}}); err == nil {
		t.Fatal("an unknown tool did not fail")
	}
}
