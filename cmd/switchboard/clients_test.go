package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/internal/testkit"
)

const deniedTool = "mcp__everything__get-env"

// gatewayArgs serve server-everything with its environment tool denied.
var gatewayArgs = []string{"-mcp-config", filepath.Join("testdata", "mcp.json"), "-allow", "mcp__*", "-deny", deniedTool}

// clientReport is what a client saw: the tools listed, the echo, and
// whether the denied tool was refused when called anyway.
type clientReport struct {
	Tools         []string `json:"tools"`
	Echo          string   `json:"echo"`
	EchoError     bool     `json:"echoError"`
	DeniedRefused bool     `json:"deniedRefused"`
	DeniedDetail  string   `json:"deniedDetail"`
	Error         string   `json:"error"`
}

// goClient drives the gateway with go-sdk's client over t.
func goClient(t *testing.T, tr gomcp.Transport) clientReport {
	t.Helper()
	c := gomcp.NewClient(&gomcp.Implementation{Name: "go-gateway-client", Version: "1"}, nil)
	cs, err := c.Connect(ctx(t, 60*time.Second), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var rep clientReport
	lt, err := cs.ListTools(ctx(t, 10*time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		rep.Tools = append(rep.Tools, tl.Name)
	}
	res, err := cs.CallTool(ctx(t, 30*time.Second), &gomcp.CallToolParams{Name: "mcp__everything__echo", Arguments: map[string]any{"message": "from-go"}})
	if err != nil {
		t.Fatal(err)
	}
	rep.EchoError = res.IsError
	for _, c := range res.Content {
		if tc, ok := c.(*gomcp.TextContent); ok {
			rep.Echo += tc.Text
		}
	}
	d, err := cs.CallTool(ctx(t, 10*time.Second), &gomcp.CallToolParams{Name: deniedTool, Arguments: map[string]any{}})
	rep.DeniedRefused = err != nil || d.IsError
	if err != nil {
		rep.DeniedDetail = err.Error()
	}
	return rep
}

// tsClient drives the gateway with the TypeScript SDK's client
// (internal/npm/mcp-gateway-client.mjs on Node 22).
func tsClient(t *testing.T, args ...string) clientReport {
	t.Helper()
	nm := testkit.NodeModules(t)
	script := filepath.Join(filepath.Dir(nm), "mcp-gateway-client.mjs")
	cmd := exec.CommandContext(ctx(t, 90*time.Second), testkit.Node22(t), append([]string{script}, args...)...)
	cmd.Env = append(gatewayEnv(t), "DENIED_TOOL="+deniedTool)
	out, err := cmd.Output()
	var rep clientReport
	if jerr := json.Unmarshal(out, &rep); jerr != nil {
		t.Fatalf("TS client: %v %v: %s", err, jerr, out)
	}
	if rep.Error != "" {
		t.Fatalf("TS client: %s", rep.Error)
	}
	return rep
}

// TestExternalClients: go-sdk's client and the TypeScript SDK's client
// connect to the gateway over stdio and Streamable HTTP, list (the denied
// tool is absent) and call (the denied tool is refused when called anyway).
func TestExternalClients(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node processes")
	}
	env := gatewayEnv(t)
	url := startHTTP(t, env, gatewayArgs...)
	bin := gatewayBin(t)
	stdioArgs := append([]string{"mcp", "serve", "-prefix", "on"}, gatewayArgs...)
	cases := []struct {
		name, want string
		run        func(t *testing.T) clientReport
	}{
		{"go/stdio", "from-go", func(t *testing.T) clientReport {
			cmd := exec.Command(bin, stdioArgs...)
			cmd.Env = env
			return goClient(t, &gomcp.CommandTransport{Command: cmd})
		}},
		{"go/http", "from-go", func(t *testing.T) clientReport {
			return goClient(t, &gomcp.StreamableClientTransport{Endpoint: url})
		}},
		{"ts/stdio", "from-ts", func(t *testing.T) clientReport {
			return tsClient(t, append([]string{"stdio", bin}, stdioArgs...)...)
		}},
		{"ts/http", "from-ts", func(t *testing.T) clientReport { return tsClient(t, "http", url) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := c.run(t)
			if !slices.Contains(rep.Tools, "mcp__everything__echo") {
				t.Errorf("tools/list lacks mcp__everything__echo: %v", rep.Tools)
			}
			if slices.Contains(rep.Tools, deniedTool) {
				t.Errorf("the denied tool %s is listed", deniedTool)
			}
			if rep.EchoError || !strings.Contains(rep.Echo, c.want) {
				t.Errorf("echo: %q (error %v)", rep.Echo, rep.EchoError)
			}
			if !rep.DeniedRefused {
				t.Errorf("calling the denied tool was not refused: %s", rep.DeniedDetail)
			}
			t.Logf("%s: %d tools listed; echo %q; denied tool refused: %s", c.name, len(rep.Tools), rep.Echo, rep.DeniedDetail)
		})
	}
}
