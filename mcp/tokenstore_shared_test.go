package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/store"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/internal/testkit/authserver"
	"github.com/switchboard-dev/switchboard/mcp"
)

// visitor follows the authorization URL as a logged-in person would.
type visitor struct{ asked atomic.Int32 }

func (v *visitor) Elicit(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
	v.asked.Add(1)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.URL+"&user="+url.QueryEscape("alice"), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return agent.ElicitationResult{}, err
	}
	resp.Body.Close()
	return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
}

// The JetStream token store is an mcp.TokenStore.
var _ mcp.TokenStore = (*store.Tokens)(nil)

// loginBus is a bus (file storage) for a test's shared logins; kv is its
// login bucket, read raw to see what the store keeps.
func loginBus(t *testing.T) (*bus.Bus, jetstream.KeyValue) {
	t.Helper()
	ctx := testkit.Ctx(t, 20*time.Second)
	b, err := bus.New(ctx, bus.Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if _, err := store.OpenTokens(ctx, b, store.TokensConfig{Sealer: sealer(t, 0)}); err != nil {
		t.Fatal(err)
	}
	kv, err := b.JetStream().KeyValue(ctx, "mcp-logins")
	if err != nil {
		t.Fatal(err)
	}
	return b, kv
}

// sealer is a TokenSealer under a key of 32 bytes of k.
func sealer(t *testing.T, k byte) *mcp.TokenSealer {
	t.Helper()
	s, err := mcp.NewTokenSealer(bytes.Repeat([]byte{k}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tokens opens the shared logins of b, sealed under 32 bytes of k.
func tokens(t *testing.T, b *bus.Bus, k byte) *store.Tokens {
	t.Helper()
	st, err := store.OpenTokens(testkit.Ctx(t, 20*time.Second), b, store.TokensConfig{Sealer: sealer(t, k)})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestSharedLogin: two Managers (two replicas of a service) share one
// login through the bucket: the second uses the first's token and never
// asks; what the bucket holds is encrypted.
func TestSharedLogin(t *testing.T) {
	srv := gomcp.NewServer(&gomcp.Implementation{Name: "api", Version: "1"}, nil)
	gomcp.AddTool(srv, &gomcp.Tool{Name: "ping"}, func(context.Context, *gomcp.CallToolRequest, struct{}) (*gomcp.CallToolResult, any, error) {
		return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "pong"}}}, nil, nil
	})
	as := authserver.New(t, gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return srv }, nil), authserver.Options{})
	b, kv := loginBus(t)
	ctx := testkit.Ctx(t, 30*time.Second)
	replica := func(v *visitor) *mcp.Manager {
		m, err := mcp.New(mcp.WithUser(ctx, "alice"), mcp.Config{Servers: []mcp.ServerConfig{{Name: "api", URL: as.Endpoint(),
			Auth: &mcp.Auth{ClientID: authserver.PublicClient}}}, Elicitor: v, TokenStore: tokens(t, b, 7), KeepAlive: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Close() })
		if _, err := m.CallTool(mcp.WithUser(ctx, "alice"), "api", "ping", json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
		return m
	}
	first, second := &visitor{}, &visitor{}
	replica(first)
	replica(second)
	if first.asked.Load() != 1 || second.asked.Load() != 0 || as.Logins("alice") != 1 {
		t.Errorf("asked: first %d, second %d; logins %d (want 1, 0, 1)", first.asked.Load(), second.asked.Load(), as.Logins("alice"))
	}
	keys, err := kv.Keys(ctx)
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys %v, %v", keys, err)
	}
	e, err := kv.Get(ctx, keys[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range as.Bearers() {
		if strings.Contains(string(e.Value()), tok) {
			t.Fatal("the bucket holds the access token in clear")
		}
	}
	// The wrong key does not open it: the login is not used.
	if _, err := tokens(t, b, 8).Load(ctx, keys[0]); err == nil {
		t.Error("a record opened with the wrong key")
	}
}

// TestSharedLoginRefresh: when one replica has refreshed the shared login
// (the authorization server rotates refresh tokens), the other adopts the
// new token from the bucket instead of refreshing with the spent refresh
// token, which would fail and, at fosite, revoke the login.
func TestSharedLoginRefresh(t *testing.T) {
	srv := gomcp.NewServer(&gomcp.Implementation{Name: "api", Version: "1"}, nil)
	gomcp.AddTool(srv, &gomcp.Tool{Name: "ping"}, func(context.Context, *gomcp.CallToolRequest, struct{}) (*gomcp.CallToolResult, any, error) {
		return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "pong"}}}, nil, nil
	})
	as := authserver.New(t, gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return srv }, nil),
		authserver.Options{AccessTokenLifespan: 2 * time.Second})
	lb, _ := loginBus(t)
	ctx := testkit.Ctx(t, 30*time.Second)
	v := &visitor{}
	newReplica := func() *mcp.Manager {
		m, err := mcp.New(ctx, mcp.Config{Servers: []mcp.ServerConfig{{Name: "api", URL: as.Endpoint(),
			Auth: &mcp.Auth{ClientID: authserver.PublicClient}}}, Elicitor: v, TokenStore: tokens(t, lb, 9), KeepAlive: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Close() })
		return m
	}
	call := func(m *mcp.Manager) {
		t.Helper()
		if _, err := m.CallTool(ctx, "api", "ping", json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	a, b := newReplica(), newReplica()
	call(a)
	call(b)
	time.Sleep(1600 * time.Millisecond) // into the last quarter of the token's life
	call(a)                             // a refreshes
	call(b)                             // b adopts a's token
	if v.asked.Load() != 1 || as.Grants("refresh_token") != 1 {
		t.Errorf("asked %d, refresh grants %d; want 1 and 1", v.asked.Load(), as.Grants("refresh_token"))
	}
}

// A sealer takes only a 32-byte key, and the shared token store only a
// sealer.
func TestTokenSealerRefusesBadKeys(t *testing.T) {
	for _, k := range [][]byte{nil, make([]byte, 16), make([]byte, 33)} {
		if _, err := mcp.NewTokenSealer(k); err == nil || failure.From(err).Kind != failure.Config {
			t.Errorf("key of %d bytes: %v, want a Config failure", len(k), err)
		}
	}
	b, _ := loginBus(t)
	if _, err := store.OpenTokens(testkit.Ctx(t, 10*time.Second), b, store.TokensConfig{}); err == nil || failure.From(err).Kind != failure.Config {
		t.Errorf("OpenTokens without a sealer: %v, want a Config failure", err)
	}
}
