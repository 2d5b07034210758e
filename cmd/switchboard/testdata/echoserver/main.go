// Command echoserver is a go-sdk MCP server on stdio with one tool, echo,
// the server every gateway fronts in BenchmarkGatewayPeers. Given a file
// (its argument), it appends one byte to it for every echo call it
// receives, so that the file's size is the calls every process of it
// received (a gateway may start one per session, or per request), which
// the benchmark checks against the calls it made.
//
// Stdin and stdout are read and written through the netpoller (made
// non-blocking), as mcp/internal/testserver does: Go 1.26 can hold a
// stop-the-world for up to 60 s when a goroutine enters a blocking read
// just as it starts, and a gateway in front of this server that does not
// ping it (the npm ones) would wait that long.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

func main() {
	var count *os.File
	if len(os.Args) > 1 {
		f, err := os.OpenFile(os.Args[1], os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		count = f
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		if count != nil {
			if _, err := count.Write([]byte{'.'}); err != nil {
				return nil, nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	if err := s.Run(context.Background(), transport()); err != nil && err != io.EOF {
		os.Exit(1)
	}
}

// transport is stdin and stdout through the netpoller, or go-sdk's
// StdioTransport where they cannot be made non-blocking.
func transport() mcp.Transport {
	if syscall.SetNonblock(0, true) != nil || syscall.SetNonblock(1, true) != nil {
		return &mcp.StdioTransport{}
	}
	return &mcp.IOTransport{Reader: os.NewFile(0, "stdin"), Writer: os.NewFile(1, "stdout")}
}
