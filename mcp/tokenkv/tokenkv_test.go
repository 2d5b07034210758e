package tokenkv_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/internal/testkit/authserver"
	"github.com/switchboard-dev/switchboard/mcp"
	"github.com/switchboard-dev/switchboard/mcp/tokenkv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		http.DefaultClient.CloseIdleConnections()
		if err := goleak.Find(goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
			goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreTopFunction("internal/poll.runtime_pollWait")); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

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

func bucket(t *testing.T) jetstream.KeyValue {
	t.Helper()
	ctx := testkit.Ctx(t, 20*time.Second)
	b, err := bus.New(ctx, bus.Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	kv, err := b.JetStream().CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "mcp-logins"})
	if err != nil {
		t.Fatal(err)
	}
	return kv
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
	kv := bucket(t)
	key := bytes.Repeat([]byte{7}, 32)
	ctx := testkit.Ctx(t, 30*time.Second)
	replica := func(v *visitor) *mcp.Manager {
		store, err := tokenkv.New(kv, key)
		if err != nil {
			t.Fatal(err)
		}
		m, err := mcp.New(mcp.WithUser(ctx, "alice"), mcp.Config{Servers: []mcp.ServerConfig{{Name: "api", URL: as.Endpoint(),
			Auth: &mcp.Auth{ClientID: authserver.PublicClient}}}, Elicitor: v, TokenStore: store, KeepAlive: -1})
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
	wrong, _ := tokenkv.New(kv, bytes.Repeat([]byte{8}, 32))
	if _, err := wrong.Load(ctx, keys[0]); err == nil {
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
	kv := bucket(t)
	key := bytes.Repeat([]byte{9}, 32)
	ctx := testkit.Ctx(t, 30*time.Second)
	v := &visitor{}
	newReplica := func() *mcp.Manager {
		store, _ := tokenkv.New(kv, key)
		m, err := mcp.New(ctx, mcp.Config{Servers: []mcp.ServerConfig{{Name: "api", URL: as.Endpoint(),
			Auth: &mcp.Auth{ClientID: authserver.PublicClient}}}, Elicitor: v, TokenStore: store, KeepAlive: -1})
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

func TestNewRefusesBadKeys(t *testing.T) {
	kv := bucket(t)
	for _, k := range [][]byte{nil, make([]byte, 16), make([]byte, 33)} {
		if _, err := tokenkv.New(kv, k); !errorsIs(err, failure.Config) {
			t.Errorf("key of %d bytes: %v, want a Config failure", len(k), err)
		}
	}
}

func errorsIs(err error, k failure.Kind) bool { return err != nil && failure.From(err).Kind == k }
