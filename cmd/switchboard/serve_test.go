package main

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// TestParseServeRefuses: flags that cannot work are refused with a line
// that names them, before anything starts.
func TestParseServeRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the message
	}{
		{nil, "nothing to serve"},
		{[]string{"-skills", "x", "extra"}, "unexpected arguments"},
		{[]string{"-skills", "x", "-auth-issuer", "https://as.example"}, "need -listen"},
		{[]string{"-skills", "x", "-listen", ":0", "-auth-issuer", "https://as.example"}, "-auth-audience is required"},
		{[]string{"-skills", "x", "-listen", ":0", "-auth-scope", "mcp"}, "-auth-audience is required"},
		{[]string{"-skills", "x", "-listen", ":0", "-auth-audience", "https://gw.example"}, "needs -auth-key or -auth-hs256-secret-env"},
		{[]string{"-skills", "x", "-listen", ":0", "-shutdown-delay", "-1s"}, "-shutdown-delay -1s"},
		{[]string{"-skills", "x", "-no-such-flag"}, "no-such-flag"},
		{[]string{"-skills", "x", "-call-timeout", "0s"}, "-call-timeout 0s"},
		{[]string{"-skills", "x", "-rate", "-1"}, "-rate -1"},
		{[]string{"-skills", "x", "-burst", "-2"}, "-burst -2"},
		{[]string{"-skills", "x", "-prefix", "sometimes"}, "-prefix: prefix \"sometimes\""},
	} {
		var out strings.Builder
		if _, err := parseServe(tc.args, &out); err == nil || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%q: %v, %q; want it refused naming %q", tc.args, err, out.String(), tc.want)
		}
	}
	if _, err := parseServe([]string{"-skills", "x", "-listen", ":0", "-shutdown-delay", "2s"}, io.Discard); err != nil {
		t.Errorf("valid flags refused: %v", err)
	}
}

func TestServeGuardFlags(t *testing.T) {
	o, err := parseServe([]string{"-skills", "x", "-guard-pii", "-guard-injection", "-guard-deny", `rm\s+-rf`}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := o.guards()
	if err != nil || len(rules) != 3 {
		t.Fatalf("rules %+v, %v", rules, err)
	}
	o.guardDeny = list{"("}
	if _, err := o.guards(); err == nil || !strings.Contains(err.Error(), "-guard-deny") {
		t.Errorf("a broken -guard-deny: %v", err)
	}
}

// TestServeFindAndCallFlag: -find-and-call serves find_tools and call_tool
// only; a -skills tool is found and called through them, and a tool -deny
// names is neither found nor called.
func TestServeFindAndCallFlag(t *testing.T) {
	o, err := parseServe([]string{"-skills", filepath.Join("testdata", "skills"), "-allow-all", "-deny", "read_skill_file", "-find-and-call"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	log := zerolog.Nop()
	cfg, closeSources, err := o.sources(ctx(t, 30*time.Second), failure.Default(), &log, new(server.Client))
	defer closeSources()
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.FindAndCall {
		t.Fatal("-find-and-call did not set server.Config.FindAndCall")
	}
	srv, err := server.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	st, ct := gomcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx(t, 10*time.Second), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "flag", Version: "1"}, nil).Connect(ctx(t, 10*time.Second), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); ss.Wait() }()
	lt, err := cs.ListTools(ctx(t, 10*time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"call_tool", "find_tools"}) {
		t.Fatalf("tools/list %v", names)
	}
	text := func(name string, args map[string]any) (string, bool) {
		res, err := cs.CallTool(ctx(t, 30*time.Second), &gomcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*gomcp.TextContent).Text, res.IsError
	}
	found, _ := text("find_tools", map[string]any{"queries": []string{"activate a skill", "read a skill's file"}})
	if !strings.Contains(found, `"activate_skill"`) || strings.Contains(found, `"read_skill_file"`) {
		t.Errorf("find_tools: %s; want activate_skill and not the denied read_skill_file", found)
	}
	if got, isErr := text("call_tool", map[string]any{"name": "activate_skill", "arguments": map[string]any{"name": "greet"}}); isErr || !strings.Contains(got, "Say hello") {
		t.Errorf("call_tool activate_skill: %q (error %v)", got, isErr)
	}
	if got, isErr := text("call_tool", map[string]any{"name": "read_skill_file", "arguments": map[string]any{"name": "greet", "path": "SKILL.md"}}); !isErr {
		t.Errorf("call_tool of a denied tool answered %q", got)
	}
}
