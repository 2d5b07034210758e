//go:build !unix

package main

import "github.com/modelcontextprotocol/go-sdk/mcp"

// pollableStdio is go-sdk's stdio transport (see stdio_unix.go).
func pollableStdio() mcp.Transport { return &mcp.StdioTransport{} }
