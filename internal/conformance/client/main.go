// Command client is the MCP conformance suite's client driver: the suite
// (@modelcontextprotocol/conformance, `conformance client --command`) runs
// it as `client <server-url>` once per scenario, with the scenario in
// MCP_CONFORMANCE_SCENARIO and its settings in MCP_CONFORMANCE_CONTEXT.
// It connects through an mcp.Manager and does what the scenario asks; a
// login's authorization URL goes through the Manager's Elicitor, which
// here "opens" it with an HTTP client, so the redirect reaches the
// Manager's own loopback listener. Modelled on go-sdk's
// conformance/everything-client.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/mcp"
)

const server = "conformance"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: client <server-url> (with MCP_CONFORMANCE_SCENARIO set)")
		os.Exit(2)
	}
	var settings map[string]any
	if s := os.Getenv("MCP_CONFORMANCE_CONTEXT"); s != "" {
		if err := json.Unmarshal([]byte(s), &settings); err != nil {
			fmt.Fprintln(os.Stderr, "MCP_CONFORMANCE_CONTEXT is not a JSON object:", err)
			os.Exit(2)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Args[1], settings); err != nil {
		fmt.Fprintln(os.Stderr, "scenario failed:", err)
		os.Exit(1)
	}
}

// scenario is what one scenario calls once connected.
type scenario struct {
	calls []string // tools to call, with {} arguments, in order
	args  map[string]map[string]any
}

var scenarios = map[string]scenario{
	"initialize":                          {},
	"tools_call":                          {calls: []string{"add_numbers"}, args: map[string]map[string]any{"add_numbers": {"a": 5, "b": 3}}},
	"elicitation-sep1034-client-defaults": {calls: []string{"test_client_elicitation_defaults"}},
	"sse-retry":                           {calls: []string{"test_reconnection"}},
}

func run(ctx context.Context, name, url string, settings map[string]any) error {
	sc, ok := scenarios[name]
	auth := strings.HasPrefix(name, "auth/")
	if auth {
		sc, ok = scenario{calls: []string{"test-tool"}}, true
	}
	if !ok {
		return fmt.Errorf("unknown scenario %q", name)
	}
	log := zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, NoColor: true}).With().Timestamp().Logger()
	cfg := mcp.ServerConfig{Name: server, URL: url, StartupTimeout: 20 * time.Second}
	if auth {
		cfg.Auth = authFor(settings)
	}
	m, err := mcp.New(ctx, mcp.Config{Servers: []mcp.ServerConfig{cfg}, Elicitor: elicitor{}, Logger: &log, MaxRestarts: 1})
	if err != nil {
		return err
	}
	defer m.Close()
	if st := m.Status()[0]; st.State != "ready" {
		return fmt.Errorf("not connected: %s: %v", st.State, st.Err)
	}
	for _, tool := range sc.calls {
		args := sc.args[tool]
		if args == nil {
			args = map[string]any{}
		}
		raw, _ := json.Marshal(args)
		if _, err := m.CallTool(ctx, server, tool, raw); err != nil {
			return fmt.Errorf("call %s: %w", tool, err)
		}
	}
	return nil
}

// authFor maps a scenario's context to the server's OAuth settings.
func authFor(settings map[string]any) *mcp.Auth {
	str := func(k string) string { s, _ := settings[k].(string); return s }
	a := &mcp.Auth{ClientID: str("client_id"), ClientSecret: str("client_secret"), PrivateKey: str("private_key_pem"),
		SigningAlg: str("signing_algorithm")}
	if a.ClientID == "" {
		// The suite's stand-in Client ID Metadata Document.
		a.ClientMetadataURL = "https://conformance-test.local/client-metadata.json"
	}
	return a
}

// elicitor answers the Manager's questions as the scenarios expect: a
// form is accepted empty (defaults apply), and an authorization URL is
// opened with an HTTP client that follows the redirect to the Manager's
// loopback listener, as a browser would.
type elicitor struct{}

func (elicitor) Elicit(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
	if e.Kind != agent.ElicitURL {
		return agent.ElicitationResult{Action: agent.ElicitAccept, Content: map[string]any{}}, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.URL, nil)
	if err != nil {
		return agent.ElicitationResult{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return agent.ElicitationResult{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return agent.ElicitationResult{Action: agent.ElicitDecline, Reason: resp.Status}, errors.New("the login page answered " + resp.Status)
	}
	return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
}
