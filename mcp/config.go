package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/failure"
)

// Transport types of a ServerConfig (the values of its Type field, as in
// the JSON of other MCP hosts).
const (
	typeStdio = "stdio"
	typeHTTP  = "http"
	typeSSE   = "sse"
	typeWS    = "ws"
	// typeInProcess is a server given in Go (ServerConfig.Server,
	// Transport or NewTransport), typically an in-memory transport.
	typeInProcess = "inprocess"
)

// ServerConfig configures one MCP server. It is what one entry of an
// `mcpServers` object decodes to; Go code may also build it directly.
type ServerConfig struct {
	// Name is the server's key in mcpServers; it names the server's tools
	// (mcp__<name>__<tool>), its logs and its failures.
	Name string `json:"-"`
	// Type is stdio (the default when Command is set), http (the default
	// when URL is set; "streamable-http" and "streamableHttp" are accepted),
	// sse, ws (the default for ws:// and wss:// URLs), or inprocess (the
	// default when Server, Transport or NewTransport is set).
	Type string `json:"type,omitempty"`
	// Command, Args, Env and Cwd start a stdio server. Env is added to the
	// host's environment.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	// URL and Headers reach an http, sse or ws server.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Timeout bounds one call of this server's tools (0: no bound of the
	// server's own). The Manager sets it as each tool's ToolSpec.Timeout,
	// which an agent prefers to its Config.ToolTimeout; Manager.CallTool,
	// outside an agent, is bounded by it too.
	Timeout time.Duration `json:"timeout,omitempty"`
	// StartupTimeout bounds connecting and the handshake (0: the Manager's).
	StartupTimeout time.Duration `json:"startupTimeout,omitempty"`
	// IdleTimeout cancels a call that reports no progress for this long
	// (0: the Manager's IdleTimeout).
	IdleTimeout time.Duration `json:"idleTimeout,omitempty"`
	// Roots are the directories (paths or file:// URIs) granted to the
	// server when it asks for roots.
	Roots []string `json:"roots,omitempty"`
	// Disabled servers are loaded but not connected.
	Disabled bool `json:"disabled,omitempty"`
	// ProtocolVersion pins the protocol revision to request (empty: the
	// newest go-sdk speaks, with a bounded fallback for servers that ignore
	// the 2026-07-28 discovery probe).
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// Auth configures MCP authorization (OAuth 2.1) for an http server
	// ("oauth" in .mcp.json). Nil: automatic, unless an Authorization
	// header is configured. See Auth and docs/mcp.md.
	Auth *Auth `json:"oauth,omitempty"`

	// Server is an in-process go-sdk server (Type inprocess). The manager
	// connects it over an in-memory pipe for each connection attempt, so
	// it is reconnected like any other server when its session ends, and
	// it reads the server's messages with its own decoder (see
	// docs/performance.md). Exactly one of Server, Transport and
	// NewTransport is set for an in-process server. Not loaded from JSON.
	Server *gomcp.Server `json:"-"`
	// Transport is an in-process server's transport (Type inprocess), for
	// example one end of mcp.NewInMemoryTransports. A transport serves one
	// session: when it ends the server is not reconnected. Not loaded from
	// JSON.
	Transport gomcp.Transport `json:"-"`
	// NewTransport, instead of Transport, returns a fresh transport for
	// each connection attempt of an in-process server (for example a new
	// pair of NewInMemoryTransports, the server side connected with
	// Server.Connect), so that it is reconnected like any other server when
	// its session ends. Not loaded from JSON.
	NewTransport func(ctx context.Context) (gomcp.Transport, error) `json:"-"`
}

// duration is a time.Duration that decodes from JSON as a number of
// milliseconds (the convention of MCP host configs) or a Go duration string
// ("30s", "2m"): the timeouts of ServerConfig and Auth in a config file.
type duration time.Duration

// UnmarshalJSON decodes milliseconds or a duration string.
func (d *duration) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%q is not a duration (use milliseconds or a string like \"30s\")", s)
		}
		if v < 0 {
			return fmt.Errorf("%q is negative", s)
		}
		*d = duration(v)
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("%s is not a number of milliseconds", b)
	}
	if f < 0 || f > float64(1<<62)/1e6 {
		return fmt.Errorf("%s milliseconds is out of range", b)
	}
	*d = duration(time.Duration(f * float64(time.Millisecond)))
	return nil
}

// configError is a configuration error naming the file, the server and the
// field. It unwraps to a *failure.Error of Kind failure.Config.
type configError struct {
	File, Server, Field string
	Msg                 string
}

// Error reads like `.mcp.json: server "db": field "url": must be an http(s) URL`.
func (e *configError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	if e.Server != "" {
		fmt.Fprintf(&b, "server %q: ", e.Server)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, "field %q: ", e.Field)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap makes errors.Is(err, failure.Config) hold.
func (e *configError) Unwrap() error {
	return &failure.Error{Kind: failure.Config, Source: failure.SourceMCP, Name: e.Server, Message: e.Msg}
}

// LoadFile reads an MCP host config file (.mcp.json,
// claude_desktop_config.json, ...) and returns its servers sorted by name,
// with ${VAR} and ${VAR:-default} expanded from the process environment.
// ParseConfig does the same for a config read elsewhere, or with another
// environment.
func LoadFile(path string) ([]ServerConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &configError{File: path, Msg: "cannot read: " + err.Error()}
	}
	return ParseConfig(path, data, nil)
}

// ParseConfig decodes the `mcpServers` JSON object of an MCP host config
// (other top-level keys are ignored) as LoadFile does; name is used in error
// messages, and lookupEnv resolves ${VAR} (nil: os.LookupEnv).
func ParseConfig(name string, data []byte, lookupEnv func(string) (string, bool)) ([]ServerConfig, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, &configError{File: name, Msg: "not a JSON object: " + jsonErr(data, err)}
	}
	raw, ok := top["mcpServers"]
	if !ok {
		if _, alt := top["servers"]; alt {
			raw = top["servers"] // VS Code's mcp.json spelling
		} else {
			return nil, &configError{File: name, Field: "mcpServers", Msg: "missing: the file must have an \"mcpServers\" object"}
		}
	}
	var servers map[string]json.RawMessage
	if err := json.Unmarshal(raw, &servers); err != nil || servers == nil {
		return nil, &configError{File: name, Field: "mcpServers", Msg: "must be an object mapping server names to their settings"}
	}
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	slices.Sort(names)
	lookup := lookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	out := make([]ServerConfig, 0, len(names))
	for _, n := range names {
		sc, err := decodeServer(name, n, servers[n], lookup)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

func jsonErr(data []byte, err error) string {
	var se *json.SyntaxError
	if ok := asSyntax(err, &se); ok {
		line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		return fmt.Sprintf("%v (line %d)", err, line)
	}
	return err.Error()
}

func asSyntax(err error, se **json.SyntaxError) bool {
	s, ok := err.(*json.SyntaxError)
	if ok {
		*se = s
	}
	return ok
}

// knownFields maps each field to the JSON type it must have.
var knownFields = map[string]string{
	"type": "string", "command": "string", "args": "array of strings", "env": "object of strings",
	"cwd": "string", "url": "string", "headers": "object of strings", "roots": "array of strings",
	"disabled": "boolean", "protocolVersion": "string",
}

// expandAuth expands ${VAR} in a server's OAuth settings.
func expandAuth(a *Auth, exp func(field, s string) string) {
	if a == nil {
		return
	}
	for _, f := range []struct {
		name string
		p    *string
	}{{"clientId", &a.ClientID}, {"clientSecret", &a.ClientSecret}, {"privateKey", &a.PrivateKey},
		{"privateKeyFile", &a.PrivateKeyFile}, {"redirectUrl", &a.RedirectURL}, {"clientMetadataUrl", &a.ClientMetadataURL}} {
		*f.p = exp("oauth."+f.name, *f.p)
	}
	for i := range a.Scopes {
		a.Scopes[i] = exp(fmt.Sprintf("oauth.scopes[%d]", i), a.Scopes[i])
	}
}

func decodeServer(file, name string, raw json.RawMessage, lookup func(string) (string, bool)) (ServerConfig, error) {
	fail := func(field, msg string, a ...any) error {
		return &configError{File: file, Server: name, Field: field, Msg: fmt.Sprintf(msg, a...)}
	}
	if strings.TrimSpace(name) == "" {
		return ServerConfig{}, fail("", "server name is empty")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return ServerConfig{}, fail("", "settings must be a JSON object")
	}
	sc := ServerConfig{Name: name}
	for f, v := range fields {
		var err error
		switch f {
		case "type", "transport", "transportType":
			err = json.Unmarshal(v, &sc.Type)
			f = "type"
		case "command":
			err = json.Unmarshal(v, &sc.Command)
		case "args":
			err = json.Unmarshal(v, &sc.Args)
		case "env":
			err = json.Unmarshal(v, &sc.Env)
		case "cwd":
			err = json.Unmarshal(v, &sc.Cwd)
		case "url", "serverUrl":
			err = json.Unmarshal(v, &sc.URL)
			f = "url"
		case "headers":
			err = json.Unmarshal(v, &sc.Headers)
		case "roots":
			err = json.Unmarshal(v, &sc.Roots)
		case "disabled":
			err = json.Unmarshal(v, &sc.Disabled)
		case "protocolVersion":
			err = json.Unmarshal(v, &sc.ProtocolVersion)
		case "timeout":
			err = json.Unmarshal(v, (*duration)(&sc.Timeout))
		case "startupTimeout", "startup_timeout_ms", "initTimeout":
			err = json.Unmarshal(v, (*duration)(&sc.StartupTimeout))
		case "idleTimeout":
			err = json.Unmarshal(v, (*duration)(&sc.IdleTimeout))
		case "oauth":
			err = json.Unmarshal(v, &sc.Auth)
		default:
			continue // other hosts' settings (autoApprove, alwaysAllow, ...) are ignored
		}
		if err != nil {
			if want, ok := knownFields[f]; ok {
				return sc, fail(f, "must be a %s", want)
			}
			return sc, fail(f, "%v", err)
		}
	}
	var err error
	exp := func(field, s string) string {
		if err != nil {
			return s
		}
		var out string
		out, err = expandEnv(s, lookup)
		if err != nil {
			err = fail(field, "%v", err)
		}
		return out
	}
	sc.Command = exp("command", sc.Command)
	for i := range sc.Args {
		sc.Args[i] = exp(fmt.Sprintf("args[%d]", i), sc.Args[i])
	}
	for _, k := range sortedKeys(sc.Env) {
		sc.Env[k] = exp("env."+k, sc.Env[k])
	}
	sc.Cwd = exp("cwd", sc.Cwd)
	sc.URL = exp("url", sc.URL)
	for _, k := range sortedKeys(sc.Headers) {
		sc.Headers[k] = exp("headers."+k, sc.Headers[k])
	}
	for i := range sc.Roots {
		sc.Roots[i] = exp(fmt.Sprintf("roots[%d]", i), sc.Roots[i])
	}
	expandAuth(sc.Auth, exp)
	if err != nil {
		return sc, err
	}
	if err := sc.normalize(); err != nil {
		var ce *configError
		if ok := asConfigErr(err, &ce); ok {
			ce.File = file
		}
		return sc, err
	}
	return sc, nil
}

func asConfigErr(err error, ce **configError) bool {
	c, ok := err.(*configError)
	if ok {
		*ce = c
	}
	return ok
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// normalize fills in the type and checks the fields the type needs.
func (sc *ServerConfig) normalize() error {
	fail := func(field, msg string, a ...any) error {
		return &configError{Server: sc.Name, Field: field, Msg: fmt.Sprintf(msg, a...)}
	}
	if strings.TrimSpace(sc.Name) == "" {
		return fail("", "server name is empty")
	}
	switch strings.ToLower(sc.Type) {
	case "":
		switch {
		case sc.Server != nil || sc.Transport != nil || sc.NewTransport != nil:
			sc.Type = typeInProcess
		case sc.Command != "":
			sc.Type = typeStdio
		case sc.URL != "":
			sc.Type = typeHTTP
			if strings.HasPrefix(sc.URL, "ws://") || strings.HasPrefix(sc.URL, "wss://") {
				sc.Type = typeWS
			}
		default:
			return fail("command", "missing: a server needs \"command\" (stdio) or \"url\" (http, sse, ws)")
		}
	case "stdio":
		sc.Type = typeStdio
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		sc.Type = typeHTTP
	case "sse":
		sc.Type = typeSSE
	case "ws", "websocket":
		sc.Type = typeWS
	case "inprocess":
		sc.Type = typeInProcess
	default:
		return fail("type", "unknown transport type %q (use stdio, http, sse or ws)", sc.Type)
	}
	switch sc.Type {
	case typeStdio:
		if strings.TrimSpace(sc.Command) == "" {
			return fail("command", "missing: a stdio server needs a command")
		}
		if sc.URL != "" {
			return fail("url", "not allowed for a stdio server (did you mean \"type\": \"http\"?)")
		}
	case typeHTTP, typeSSE, typeWS:
		if sc.URL == "" {
			return fail("url", "missing: a %s server needs a url", sc.Type)
		}
		if sc.Command != "" {
			return fail("command", "not allowed for a %s server", sc.Type)
		}
		schemes := []string{"http://", "https://"}
		if sc.Type == typeWS {
			schemes = []string{"ws://", "wss://", "http://", "https://"}
		}
		ok := false
		for _, s := range schemes {
			if strings.HasPrefix(strings.ToLower(sc.URL), s) && len(sc.URL) > len(s) {
				ok = true
			}
		}
		if !ok {
			return fail("url", "%q must start with %s", sc.URL, strings.Join(schemes, " or "))
		}
	case typeInProcess:
		n := 0
		for _, set := range []bool{sc.Server != nil, sc.Transport != nil, sc.NewTransport != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			return fail("transport", "an inprocess server needs exactly one of Server, Transport and NewTransport (it has %d)", n)
		}
	}
	for k := range sc.Headers {
		if k == "" || strings.ContainsAny(k, " :\r\n") {
			return fail("headers", "%q is not a valid header name", k)
		}
	}
	for k := range sc.Env {
		if k == "" || strings.Contains(k, "=") {
			return fail("env", "%q is not a valid variable name", k)
		}
	}
	if sc.ProtocolVersion != "" && !slices.Contains(protocolVersions, sc.ProtocolVersion) {
		return fail("protocolVersion", "%q is not a protocol version go-sdk speaks (%s)", sc.ProtocolVersion, strings.Join(protocolVersions, ", "))
	}
	return sc.checkAuth()
}

// protocolVersions are the revisions go-sdk v1.8.0 negotiates.
var protocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// expandEnv expands ${VAR} and ${VAR:-default}. An unset variable without
// a default is an error; "$" not followed by "{" is kept as is.
func expandEnv(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		rest := s[i+2:]
		j := strings.IndexByte(rest, '}')
		if j < 0 {
			return "", fmt.Errorf("unterminated ${ in %q", s)
		}
		expr := rest[:j]
		name, def, hasDef := strings.Cut(expr, ":-")
		if !validVarName(name) {
			return "", fmt.Errorf("${%s}: %q is not a valid variable name", expr, name)
		}
		v, ok := lookup(name)
		switch {
		case ok && v != "":
			b.WriteString(v)
		case hasDef:
			b.WriteString(def)
		case ok:
		default:
			return "", fmt.Errorf("environment variable %s is not set (set it, or write ${%s:-default})", name, name)
		}
		s = rest[j+1:]
	}
}

func validVarName(n string) bool {
	if n == "" {
		return false
	}
	for i, r := range n {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
