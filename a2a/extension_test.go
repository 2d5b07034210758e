package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
)

type testExtension struct {
	decl     a2ago.AgentExtension
	activate bool
	mu       sync.Mutex
	asked    int
}

func (e *testExtension) Declaration() a2ago.AgentExtension { return e.decl }
func (e *testExtension) Activate(ctx context.Context, r *http.Request) (context.Context, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.asked++
	return ctx, e.activate
}

type testClientExtension struct {
	uri            string
	mu             sync.Mutex
	active, passed int
}

func (e *testClientExtension) URI() string { return e.uri }
func (e *testClientExtension) Activated(_ context.Context, peer string, active bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if active {
		e.active++
	} else {
		e.passed++
	}
}

// TestExtensions: the server declares its extensions on the card, the
// client asks for its own in A2A-Extensions, the server activates those it
// supports and echoes them, and the client is told which were activated,
// over both bindings.
func TestExtensions(t *testing.T) {
	on := &testExtension{decl: a2ago.AgentExtension{URI: "https://example.com/ext/on/v1", Description: "activated"}, activate: true}
	off := &testExtension{decl: a2ago.AgentExtension{URI: "https://example.com/ext/off/v1", Description: "declined"}}
	_, hs := newWorker(t, ServerConfig{Extensions: []Extension{on, off}})

	resp, err := http.Get(hs.URL + cardPath)
	if err != nil {
		t.Fatal(err)
	}
	var card struct {
		Capabilities struct {
			Extensions []a2ago.AgentExtension `json:"extensions"`
		} `json:"capabilities"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if len(card.Capabilities.Extensions) != 2 || card.Capabilities.Extensions[0].URI != on.decl.URI {
		t.Fatalf("card extensions = %+v", card.Capabilities.Extensions)
	}

	for _, rest := range []bool{false, true} {
		t.Run(map[bool]string{false: "JSONRPC", true: "HTTP+JSON"}[rest], func(t *testing.T) {
			ce := []*testClientExtension{{uri: on.decl.URI}, {uri: off.decl.URI}, {uri: "https://example.com/ext/unknown"}}
			ts, err := NewToolset(ctxT(t), ToolsetConfig{Extensions: []ClientExtension{ce[0], ce[1], ce[2]},
				Peers: []Peer{{Name: "w", URL: hs.URL, PreferREST: rest, NoStreaming: true}}})
			if err != nil {
				t.Fatal(err)
			}
			defer ts.Close()
			tools, _ := ts.Tools(ctxT(t))
			res, err := tools[0].Call(ctxT(t), json.RawMessage(`{"message":"hello"}`))
			if err != nil || !strings.Contains(res.Text(), "w") {
				t.Fatalf("call = %v, %v", res, err)
			}
			if ce[0].active == 0 || ce[0].passed != 0 {
				t.Errorf("activated extension: active %d, not %d", ce[0].active, ce[0].passed)
			}
			for _, e := range ce[1:] {
				if e.active != 0 || e.passed == 0 {
					t.Errorf("%s: active %d, not %d", e.uri, e.active, e.passed)
				}
			}
		})
	}
	if on.asked == 0 || off.asked == 0 {
		t.Fatalf("server extensions asked: on %d, off %d", on.asked, off.asked)
	}
}

// TestRequiredExtension: a required extension the client does not ask for
// is refused by the server.
func TestRequiredExtension(t *testing.T) {
	req := &testExtension{decl: a2ago.AgentExtension{URI: "https://example.com/ext/req/v1", Required: true}, activate: true}
	_, hs := newWorker(t, ServerConfig{Extensions: []Extension{req}})
	ts, err := NewToolset(ctxT(t), ToolsetConfig{Peers: []Peer{{Name: "w", URL: hs.URL, NoStreaming: true}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	tools, _ := ts.Tools(ctxT(t))
	if _, err := tools[0].Call(ctxT(t), json.RawMessage(`{"message":"hello"}`)); err == nil {
		t.Fatal("a call without the required extension succeeded")
	}
	ce := &testClientExtension{uri: req.decl.URI}
	ts2, err := NewToolset(ctxT(t), ToolsetConfig{Extensions: []ClientExtension{ce}, Peers: []Peer{{Name: "w", URL: hs.URL, NoStreaming: true}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts2.Close()
	tools, _ = ts2.Tools(ctxT(t))
	if _, err := tools[0].Call(ctxT(t), json.RawMessage(`{"message":"hello"}`)); err != nil {
		t.Fatalf("with the required extension: %v", err)
	}
}

// TestTenantSent: Peer.Tenant travels in each JSON-RPC request's params.
func TestTenantSent(t *testing.T) {
	srv, _ := newWorker(t, ServerConfig{})
	var mu sync.Mutex
	var tenants []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			var req struct {
				Params struct {
					Tenant string `json:"tenant"`
				} `json:"params"`
			}
			_ = json.Unmarshal(b, &req)
			mu.Lock()
			tenants = append(tenants, req.Params.Tenant)
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		srv.ServeHTTP(w, r)
	}))
	defer hs.Close()
	ts, err := NewToolset(ctxT(t), ToolsetConfig{Peers: []Peer{{Name: "w", URL: hs.URL, Tenant: "acme", NoStreaming: true}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	tools, _ := ts.Tools(ctxT(t))
	if _, err := tools[0].Call(ctxT(t), json.RawMessage(`{"message":"hello"}`)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tenants) == 0 || tenants[0] != "acme" {
		t.Fatalf("tenants sent = %q, want acme", tenants)
	}
}
