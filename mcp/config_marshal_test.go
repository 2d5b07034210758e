package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestConfigRoundTrip: a parsed config marshals to JSON that ParseConfig
// reads back to the same values (the timeouts used to marshal as
// nanoseconds, which ParseConfig reads as milliseconds), and a whole number
// of milliseconds is written as the number other MCP hosts read.
func TestConfigRoundTrip(t *testing.T) {
	env := envOf(map[string]string{"HOME": "/home/ada", "GITHUB_TOKEN": "ghp_x", "API_TOKEN": "t0k", "PORT": ""})
	tests := []struct {
		file string
		want map[string]string // server -> substring its marshalled JSON must hold
	}{
		{"timeouts.json", map[string]string{
			"ms":        `"timeout":45000,"startupTimeout":10000,"idleTimeout":2500`,
			"strings":   `"timeout":30000,"startupTimeout":120000,"idleTimeout":5400000`,
			"fractions": `"timeout":"1.5ms","startupTimeout":"250µs","idleTimeout":"1.000000001s"`,
			"oauth":     `"loginTimeout":150000`,
			"oauth-ms":  `"loginTimeout":1500`,
			"none":      `"command":"srv"`,
		}},
		{"mcp.json", map[string]string{"api": `"timeout":45000,"startupTimeout":10000`, "local": `"idleTimeout":2500`}},
		{"claude_desktop_config.json", nil},
		{"vscode_mcp.json", nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			first, err := loadFile(filepath.Join("testdata", "config", tt.file), env)
			if err != nil {
				t.Fatal(err)
			}
			servers := map[string]ServerConfig{}
			for _, sc := range first {
				servers[sc.Name] = sc
			}
			data, err := json.Marshal(map[string]any{"mcpServers": servers})
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range tt.want {
				b, err := json.Marshal(servers[name])
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(b), want) {
					t.Errorf("%s marshals to %s, want it to hold %s", name, b, want)
				}
			}
			second, err := ParseConfig("again.json", data, env)
			if err != nil {
				t.Fatalf("parsing the marshalled config %s: %v", data, err)
			}
			if !reflect.DeepEqual(first, second) {
				t.Errorf("round trip changed the config:\nfirst  %+v\nsecond %+v\njson %s", first, second, data)
			}
		})
	}
}

// TestConfigTimeoutsSurviveMarshal checks the values, not only equality: a
// config parsed from its own marshalled form has the timeouts it was built
// with in Go.
func TestConfigTimeoutsSurviveMarshal(t *testing.T) {
	sc := ServerConfig{Command: "srv", Timeout: 3 * time.Second, StartupTimeout: 7*time.Millisecond + 5*time.Microsecond,
		IdleTimeout: time.Duration(1<<62) / 1e3, Args: []string{}}
	data, err := json.Marshal(map[string]any{"mcpServers": map[string]ServerConfig{"s": sc}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseConfig("x.json", data, nil)
	if err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	if g := got[0]; g.Timeout != sc.Timeout || g.StartupTimeout != sc.StartupTimeout || g.IdleTimeout != sc.IdleTimeout {
		t.Errorf("timeouts %v %v %v, want %v %v %v (json %s)", g.Timeout, g.StartupTimeout, g.IdleTimeout,
			sc.Timeout, sc.StartupTimeout, sc.IdleTimeout, data)
	}
	if _, err := os.Stat(filepath.Join("testdata", "config", "timeouts.json")); err != nil {
		t.Fatal(err)
	}
}
