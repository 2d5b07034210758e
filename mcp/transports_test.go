package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/mcp/internal/wstransport"
)

type echoArgs struct {
	Text string `json:"text"`
}

// goServer is a small go-sdk server for transport tests.
func goServer() *gomcp.Server {
	s := gomcp.NewServer(&gomcp.Implementation{Name: "go-test", Version: "1.0.0"}, nil)
	gomcp.AddTool(s, &gomcp.Tool{Name: "echo", Description: "Echo text."},
		func(ctx context.Context, req *gomcp.CallToolRequest, in echoArgs) (*gomcp.CallToolResult, any, error) {
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: in.Text}}}, nil, nil
		})
	return s
}

func TestTransports(t *testing.T) {
	srv := goServer()
	auth := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer s3cret" {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	get := func(*http.Request) *gomcp.Server { return srv }
	httpSrv := httptest.NewServer(auth(gomcp.NewStreamableHTTPHandler(get, nil)))
	t.Cleanup(httpSrv.Close)
	sseSrv := httptest.NewServer(auth(gomcp.NewSSEHandler(get, nil)))
	t.Cleanup(sseSrv.Close)
	wsSrv := httptest.NewServer(auth(wstransport.NewHandler(get, nil)))
	t.Cleanup(wsSrv.Close)
	clientT, serverT := gomcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	hdr := map[string]string{"Authorization": "Bearer s3cret"}
	tests := []struct {
		sc       ServerConfig
		protocol string
	}{
		{ServerConfig{Name: "http", URL: httpSrv.URL, Headers: hdr}, ""},
		{ServerConfig{Name: "sse", Type: "sse", URL: sseSrv.URL, Headers: hdr}, "2025-11-25"},
		{ServerConfig{Name: "ws", URL: "ws" + strings.TrimPrefix(wsSrv.URL, "http"), Headers: hdr}, "2026-07-28"},
		{ServerConfig{Name: "inproc", Transport: clientT}, "2026-07-28"},
	}
	var servers []ServerConfig
	for _, tt := range tests {
		servers = append(servers, tt.sc)
	}
	m := newManager(t, quickConfig(servers...))
	for i, tt := range tests {
		t.Run(tt.sc.Name, func(t *testing.T) {
			st := m.Status()[i]
			if st.State != stateReady {
				t.Fatalf("status %+v", st)
			}
			if tt.protocol != "" && st.Protocol != tt.protocol {
				t.Errorf("protocol %s, want %s", st.Protocol, tt.protocol)
			}
			res, err := m.CallTool(context.Background(), tt.sc.Name, "echo", json.RawMessage(`{"text":"via `+tt.sc.Name+`"}`))
			if err != nil || res.Text() != "via "+tt.sc.Name {
				t.Fatalf("%v %v", res, err)
			}
		})
	}
	t.Run("missing credentials fail typed", func(t *testing.T) {
		cfg := quickConfig(ServerConfig{Name: "noauth", URL: httpSrv.URL}, ServerConfig{Name: "wsnoauth", URL: "ws" + strings.TrimPrefix(wsSrv.URL, "http")})
		cfg.MaxRestarts = 1
		m2 := newManager(t, cfg)
		for _, st := range m2.Status() {
			if st.State != stateFailed || !errors.Is(st.Err, failure.PermissionDenied) {
				t.Errorf("%+v, want failed with permission_denied", st)
			}
		}
	})
}

func TestWebSocketReconnects(t *testing.T) {
	srv := goServer()
	wsSrv := httptest.NewServer(wstransport.NewHandler(func(*http.Request) *gomcp.Server { return srv }, nil))
	t.Cleanup(wsSrv.Close)
	m := newManager(t, quickConfig(ServerConfig{Name: "ws", URL: "ws" + strings.TrimPrefix(wsSrv.URL, "http")}))
	if _, err := m.CallTool(context.Background(), "ws", "echo", json.RawMessage(`{"text":"a"}`)); err != nil {
		t.Fatal(err)
	}
	for ss := range srv.Sessions() {
		_ = ss.Close() // the server drops the connection
	}
	waitFor(t, "the reconnection", func() bool { return m.Status()[0].Connects == 2 && m.Status()[0].State == stateReady })
	if _, err := m.CallTool(context.Background(), "ws", "echo", json.RawMessage(`{"text":"b"}`)); err != nil {
		t.Fatal(err)
	}
}

func TestHTTPSessionExpiry(t *testing.T) {
	srv := goServer()
	h := gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return srv },
		&gomcp.StreamableHTTPOptions{SessionTimeout: 300 * time.Millisecond})
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	sc := ServerConfig{Name: "h", URL: hs.URL, ProtocolVersion: "2025-11-25"} // a stateful session
	cfg := quickConfig(sc)
	log := zerolog.New(zerolog.NewTestWriter(t))
	cfg.Logger = &log
	m := newManager(t, cfg)
	if _, err := m.CallTool(context.Background(), "h", "echo", json.RawMessage(`{"text":"a"}`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the server to forget the idle session", func() bool {
		n := 0
		for range srv.Sessions() {
			n++
		}
		return n == 0
	})
	res, err := m.CallTool(context.Background(), "h", "echo", json.RawMessage(`{"text":"b"}`))
	if err != nil || res.Text() != "b" {
		t.Fatalf("after expiry: %v %v", res, err)
	}
	waitFor(t, "the new session", func() bool { return m.Status()[0].Connects >= 2 })
}

func TestProtocolVersions(t *testing.T) {
	var servers []ServerConfig
	for _, v := range protocolVersions {
		sc := testServer("v"+strings.ReplaceAll(v, "-", ""), "", nil)
		sc.ProtocolVersion = v
		servers = append(servers, sc)
	}
	m := newManager(t, quickConfig(servers...))
	for i, v := range protocolVersions {
		t.Run(v, func(t *testing.T) {
			st := m.Status()[i]
			if st.State != stateReady || st.Protocol != v {
				t.Fatalf("%+v, want ready on %s", st, v)
			}
			res, err := m.CallTool(context.Background(), st.Name, "echo", json.RawMessage(`{"text":"`+v+`"}`))
			if err != nil || res.Text() != v {
				t.Fatalf("%v %v", res, err)
			}
		})
	}
}
