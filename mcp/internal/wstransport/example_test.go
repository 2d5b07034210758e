package wstransport_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/mcp/internal/wstransport"
)

// A go-sdk server served over WebSocket with NewHandler, and a go-sdk
// client connected to it with ClientTransport. An mcp.ServerConfig with a
// ws:// URL uses the same transport.
func Example() {
	srv := gomcp.NewServer(&gomcp.Implementation{Name: "upper", Version: "1.0.0"}, nil)
	gomcp.AddTool(srv, &gomcp.Tool{Name: "upper"}, func(ctx context.Context, req *gomcp.CallToolRequest, a struct {
		Text string `json:"text"`
	}) (*gomcp.CallToolResult, any, error) {
		return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: strings.ToUpper(a.Text)}}}, nil, nil
	})
	hs := httptest.NewServer(wstransport.NewHandler(func(*http.Request) *gomcp.Server { return srv }, nil))
	defer hs.Close()

	ctx := context.Background()
	client := gomcp.NewClient(&gomcp.Implementation{Name: "client", Version: "1.0.0"}, nil)
	url := "ws" + strings.TrimPrefix(hs.URL, "http")
	cs, err := client.Connect(ctx, &wstransport.ClientTransport{URL: url}, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "upper", Arguments: json.RawMessage(`{"text":"hello"}`)})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].(*gomcp.TextContent).Text)
	// Output: HELLO
}

// A server that refuses the opening handshake: the error carries its HTTP
// status.
func ExampleHandshakeError() {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no token", http.StatusUnauthorized)
	}))
	defer hs.Close()
	_, err := (&wstransport.ClientTransport{URL: hs.URL}).Connect(context.Background())
	var he *wstransport.HandshakeError
	if errors.As(err, &he) {
		fmt.Println("handshake refused with HTTP", he.Status)
	}
	// Output: handshake refused with HTTP 401
}
