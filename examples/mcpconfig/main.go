// Command mcpconfig connects to the MCP servers of an existing .mcp.json
// (or claude_desktop_config.json), lists their state and tools, and
// optionally calls one tool.
//
//	go run ./examples/mcpconfig                       # uses examples/mcpconfig/.mcp.json
//	go run ./examples/mcpconfig -config ~/.mcp.json -call everything/echo -args '{"message":"hi"}'
//
// ${MCP_CONFIG_DIR} in the file expands to the file's directory, besides
// the environment.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/mcp"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mcpconfig:", err)
		os.Exit(1)
	}
}

func defaultConfig() string {
	if _, err := os.Stat(".mcp.json"); err == nil {
		return ".mcp.json"
	}
	return filepath.Join("examples", "mcpconfig", ".mcp.json")
}

// loadServers reads the servers of the host config file at config, with
// ${MCP_CONFIG_DIR} expanding to the file's directory.
func loadServers(config string) ([]mcp.ServerConfig, error) {
	dir, err := filepath.Abs(filepath.Dir(config))
	if err != nil {
		return nil, err
	}
	lookup := func(k string) (string, bool) {
		if k == "MCP_CONFIG_DIR" {
			return dir, true
		}
		return os.LookupEnv(k)
	}
	data, err := os.ReadFile(config)
	if err != nil {
		return nil, err
	}
	return mcp.ParseConfig(config, data, lookup)
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("mcpconfig", flag.ContinueOnError)
	fs.SetOutput(out)
	config := fs.String("config", defaultConfig(), "the MCP host config file (.mcp.json, claude_desktop_config.json)")
	call := fs.String("call", "", "a tool to call, as server/tool")
	callArgs := fs.String("args", "{}", "the tool's arguments (a JSON object)")
	timeout := fs.Duration("timeout", time.Minute, "how long to wait for servers and the call")
	if err := fs.Parse(args); err != nil {
		return err
	}
	servers, err := loadServers(*config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	m, err := mcp.New(ctx, mcp.Config{Servers: servers, MaxRestarts: 3})
	if err != nil {
		return err
	}
	defer m.Close()
	for _, st := range m.Status() {
		line := fmt.Sprintf("server %s (%s): %s", st.Name, st.Type, st.State)
		if st.State == "ready" {
			line += fmt.Sprintf(", %s %s, protocol %s, %d tools", st.ServerName, st.ServerVersion, st.Protocol, st.Tools)
		} else if st.Err != nil {
			line += ": " + st.Err.Error()
		}
		fmt.Fprintln(out, line)
	}
	tools, err := m.Toolset().Tools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		s := t.Spec()
		desc, _, _ := strings.Cut(s.Description, "\n")
		fmt.Fprintf(out, "  %s: %s\n", s.Name, desc)
	}
	if *call == "" {
		return nil
	}
	server, tool, ok := strings.Cut(*call, "/")
	if !ok {
		return errors.New("-call must be server/tool")
	}
	res, err := m.CallTool(ctx, server, tool, json.RawMessage(*callArgs))
	if err != nil {
		return err
	}
	if res.IsError {
		fmt.Fprintln(out, "tool error:", res.Text())
		return nil
	}
	fmt.Fprintln(out, res.Text())
	return nil
}
