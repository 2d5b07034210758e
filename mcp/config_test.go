package mcp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
)

// loadFile is LoadFile with lookup as the environment.
func loadFile(path string, lookup func(string) (string, bool)) ([]ServerConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(path, data, lookup)
}

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestLoadRealWorldConfigs(t *testing.T) {
	env := envOf(map[string]string{"HOME": "/home/ada", "GITHUB_TOKEN": "ghp_x", "API_TOKEN": "t0k", "PORT": ""})
	byName := func(t *testing.T, file string) map[string]ServerConfig {
		t.Helper()
		servers, err := loadFile(filepath.Join("testdata", "config", file), env)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]ServerConfig{}
		for _, s := range servers {
			out[s.Name] = s
		}
		return out
	}
	claude := byName(t, "claude_desktop_config.json")
	mcpjson := byName(t, "mcp.json")
	vscode := byName(t, "vscode_mcp.json")
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"fs type", claude["filesystem"].Type, typeStdio},
		{"fs arg expanded", claude["filesystem"].Args[2], "/home/ada/Desktop"},
		{"github env expanded", claude["github"].Env["GITHUB_PERSONAL_ACCESS_TOKEN"], "ghp_x"},
		{"sqlite default", claude["sqlite"].Args[2], "/tmp/test.db"},
		{"sqlite disabled", claude["sqlite"].Disabled, true},
		{"api type", mcpjson["api"].Type, typeHTTP},
		{"api url default", mcpjson["api"].URL, "https://mcp.example.com/mcp"},
		{"api header", mcpjson["api"].Headers["Authorization"], "Bearer t0k"},
		{"api timeout ms", mcpjson["api"].Timeout, 45 * time.Second},
		{"api startup string", mcpjson["api"].StartupTimeout, 10 * time.Second},
		{"sse", mcpjson["legacy"].Type, typeSSE},
		{"ws inferred", mcpjson["socket"].Type, typeWS},
		{"url without type is http", mcpjson["cursor-style"].Type, typeHTTP},
		{"local command default", mcpjson["local"].Command, "./bin/server"},
		{"empty var is empty", mcpjson["local"].Args[1], ""},
		{"cwd", mcpjson["local"].Cwd, "/srv"},
		{"roots", len(mcpjson["local"].Roots), 2},
		{"idle", mcpjson["local"].IdleTimeout, 2500 * time.Millisecond},
		{"protocol", mcpjson["local"].ProtocolVersion, "2025-06-18"},
		{"vscode servers key", vscode["memory"].Type, typeStdio},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

func TestExpandEnv(t *testing.T) {
	env := map[string]string{"A": "alpha", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		in, want, err string
	}{
		{"plain", "plain", ""},
		{"${A}", "alpha", ""},
		{"x-${A}-y-${A}", "x-alpha-y-alpha", ""},
		{"${MISSING:-def}", "def", ""},
		{"${EMPTY:-def}", "def", ""},
		{"${EMPTY}", "", ""},
		{"${A:-def}", "alpha", ""},
		{"${MISSING:-}", "", ""},
		{"$A stays", "$A stays", ""},
		{"${MISSING}", "", "environment variable MISSING is not set"},
		{"${A", "", "unterminated"},
		{"${}", "", "not a valid variable name"},
		{"${A B}", "", "not a valid variable name"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := expandEnv(tt.in, lookup)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestInvalidConfigs(t *testing.T) {
	tests := []struct{ file, want string }{
		{"args_not_strings.json", `server "x": field "args": must be a array of strings`},
		{"command_not_string.json", `server "x": field "command": must be a string`},
		{"missing_command.json", `server "x": field "command": missing: a server needs "command" (stdio) or "url"`},
		{"http_missing_url.json", `server "x": field "url": missing: a http server needs a url`},
		{"bad_url_scheme.json", `server "x": field "url": "ftp://host/mcp" must start with http:// or https://`},
		{"unknown_type.json", `server "x": field "type": unknown transport type "grpc"`},
		{"env_not_strings.json", `server "x": field "env": must be a object of strings`},
		{"env_unset.json", `server "x": field "env.A": environment variable NOPE_UNSET is not set`},
		{"unterminated.json", `server "x": field "args[0]": unterminated ${`},
		{"bad_header.json", `server "x": field "headers": "Bad Header" is not a valid header name`},
		{"headers_not_object.json", `server "x": field "headers": must be a object of strings`},
		{"bad_timeout.json", `server "x": field "timeout": "soon" is not a duration`},
		{"negative_timeout.json", `server "x": field "timeout": -5 milliseconds is out of range`},
		{"stdio_with_url.json", `server "x": field "url": not allowed for a stdio server`},
		{"sse_with_command.json", `server "x": field "command": not allowed for a sse server`},
		{"bad_protocol.json", `server "x": field "protocolVersion": "2023-01-01" is not a protocol version`},
		{"server_not_object.json", `server "x": settings must be a JSON object`},
		{"servers_not_object.json", `field "mcpServers": must be an object`},
		{"missing_mcpservers.json", `field "mcpServers": missing`},
		{"syntax_error.json", `not a JSON object: invalid character '}'`},
		{"disabled_not_bool.json", `server "x": field "disabled": must be a boolean`},
		{"bad_var_name.json", `server "x": field "args[0]": ${1BAD}: "1BAD" is not a valid variable name`},
		{"roots_not_array.json", `server "x": field "roots": must be a array of strings`},
	}
	entries, _ := os.ReadDir(filepath.Join("testdata", "config", "invalid"))
	if len(entries) != len(tests) {
		t.Errorf("%d fixtures but %d cases", len(entries), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "config", "invalid", tt.file)
			_, err := loadFile(path, envOf(nil))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), path+": ") {
				t.Errorf("error %q does not name the file", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tt.want)
			}
			if !errors.Is(err, failure.Config) {
				t.Errorf("errors.Is(err, failure.Config) is false")
			}
		})
	}
}

func TestLoadFileMissing(t *testing.T) {
	_, err := LoadFile(filepath.Join(t.TempDir(), "nope.json"))
	if err == nil || !strings.Contains(err.Error(), "nope.json: cannot read") {
		t.Fatalf("err = %v", err)
	}
}

func TestToolNames(t *testing.T) {
	const maxToolName = 64 // the providers' limit
	long := strings.Repeat("x", 80)
	tests := []struct{ server, tool, want string }{
		{"github", "create_issue", "mcp__github__create_issue"},
		{"my server", "get.file", "mcp__my_server__get_file"},
		{"s", "ünïcode", "mcp__s___n_code"},
		{"s", "", "mcp__s___"},
	}
	for _, tt := range tests {
		if got := modelToolName(tt.server, tt.tool); got != tt.want {
			t.Errorf("modelToolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
		}
	}
	a, b := modelToolName("srv", long+"a"), modelToolName("srv", long+"b")
	if len(a) != maxToolName || len(b) != maxToolName || a == b {
		t.Errorf("long names %q %q: want distinct, %d chars", a, b, maxToolName)
	}
	var n namer
	first, second := n.name("s", "get.file"), n.name("s", "get_file")
	if first != "mcp__s__get_file" || second == first || len(second) > maxToolName {
		t.Errorf("collision: %q then %q", first, second)
	}
}

func FuzzParseConfig(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "config", "*.json"))
	inv, _ := filepath.Glob(filepath.Join("testdata", "config", "invalid", "*.json"))
	for _, p := range append(files, inv...) {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"mcpServers":{"a":{"command":"${X:-${Y}}"}}}`))
	lookup := func(k string) (string, bool) { return "v", k == "X" }
	f.Fuzz(func(t *testing.T, data []byte) {
		servers, err := ParseConfig("fuzz.json", data, lookup)
		if err != nil {
			var ce *configError
			if !errors.As(err, &ce) || !errors.Is(err, failure.Config) {
				t.Fatalf("error %v is not a *ConfigError of kind config", err)
			}
			return
		}
		for _, s := range servers {
			switch s.Type {
			case typeStdio:
				if s.Command == "" {
					t.Fatalf("stdio server %q without command", s.Name)
				}
			case typeHTTP, typeSSE, typeWS:
				if s.URL == "" {
					t.Fatalf("%s server %q without url", s.Type, s.Name)
				}
			default:
				t.Fatalf("server %q has type %q", s.Name, s.Type)
			}
		}
	})
}
