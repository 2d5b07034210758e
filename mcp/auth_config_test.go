package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
)

// TestParseOAuthConfig: Claude Code's oauth settings (clientId,
// callbackPort, scopes) and ours load; bad ones are refused with the
// field named.
func TestParseOAuthConfig(t *testing.T) {
	env := map[string]string{"CID": "my-client", "SECRET": "s3"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		name, oauth string
		want        Auth
		err         string
	}{
		{"claude code", `{"clientId": "${CID}", "callbackPort": 8080, "scopes": "read write"}`,
			Auth{ClientID: "my-client", CallbackPort: 8080, Scopes: []string{"read", "write"}}, ""},
		{"scope list", `{"scopes": ["a", "b"]}`, Auth{Scopes: []string{"a", "b"}}, ""},
		{"service", `{"grant": "client_credentials", "clientId": "svc", "clientSecret": "${SECRET}"}`,
			Auth{Grant: "client_credentials", ClientID: "svc", ClientSecret: "s3"}, ""},
		{"host redirect", `{"redirectUrl": "https://app.example.com/oauth/callback"}`, Auth{RedirectURL: "https://app.example.com/oauth/callback"}, ""},
		{"disabled", `{"disabled": true}`, Auth{Disabled: true}, ""},
		{"login timeout ms", `{"loginTimeout": 1500}`, Auth{LoginTimeout: 1500 * time.Millisecond}, ""},
		{"login timeout string", `{"loginTimeout": "2m"}`, Auth{LoginTimeout: 2 * time.Minute}, ""},
		{"bad login timeout", `{"loginTimeout": "soon"}`, Auth{}, `"soon" is not a duration`},
		{"bad grant", `{"grant": "password"}`, Auth{}, `field "oauth.grant": "password" is not a grant`},
		{"cc without secret", `{"grant": "client_credentials", "clientId": "svc"}`, Auth{}, `field "oauth.clientId"`},
		{"bad port", `{"callbackPort": 70000}`, Auth{}, `field "oauth.callbackPort": 70000 is not a port`},
		{"port and redirect", `{"callbackPort": 1, "redirectUrl": "http://h/cb"}`, Auth{}, `not both`},
		{"bad redirect", `{"redirectUrl": "/cb"}`, Auth{}, `field "oauth.redirectUrl"`},
		{"cimd not https", `{"clientMetadataUrl": "http://x/c.json"}`, Auth{}, `field "oauth.clientMetadataUrl"`},
		{"bad key", `{"grant": "client_credentials", "clientId": "svc", "privateKey": "nope"}`, Auth{}, `field "oauth.privateKey": the private key is not PEM`},
		{"scopes not strings", `{"scopes": 3}`, Auth{}, `scopes must be a list`},
		{"unset variable", `{"clientId": "${NOPE}"}`, Auth{}, `field "oauth.clientId": environment variable NOPE is not set`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := `{"mcpServers": {"api": {"url": "https://mcp.example.com/mcp", "oauth": ` + tt.oauth + `}}}`
			got, err := ParseConfig(".mcp.json", []byte(data), lookup)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, failure.Config) {
					t.Fatalf("err %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a := got[0].Auth
			if a == nil || a.ClientID != tt.want.ClientID || a.ClientSecret != tt.want.ClientSecret || a.Grant != tt.want.Grant ||
				a.CallbackPort != tt.want.CallbackPort || a.RedirectURL != tt.want.RedirectURL || a.Disabled != tt.want.Disabled ||
				a.LoginTimeout != tt.want.LoginTimeout ||
				strings.Join(a.Scopes, " ") != strings.Join(tt.want.Scopes, " ") {
				t.Errorf("auth %+v, want %+v", a, tt.want)
			}
		})
	}
	_, err := ParseConfig("x.json", []byte(`{"mcpServers": {"s": {"command": "srv", "oauth": {}}}}`), nil)
	if err == nil || !strings.Contains(err.Error(), "authorization is supported for http") {
		t.Errorf("oauth on a stdio server: %v", err)
	}
}

// TestFileTokenStore: records round-trip, the file is 0600, a corrupt
// file is an error, not an empty store.
func TestFileTokenStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "tokens.json")
	s, err := NewFileTokenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if b, err := s.Load(ctx, "a.u"); b != nil || err != nil {
		t.Fatalf("empty store: %q, %v", b, err)
	}
	if err := s.Save(ctx, "a.u", []byte(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, "b.ualice", []byte("two")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v; want 0600", st.Mode().Perm(), err)
	}
	s2, _ := NewFileTokenStore(path)
	if b, _ := s2.Load(ctx, "a.u"); string(b) != `{"v":1}` {
		t.Errorf("reloaded %q", b)
	}
	if err := s2.Delete(ctx, "a.u"); err != nil {
		t.Fatal(err)
	}
	if b, _ := s.Load(ctx, "a.u"); b != nil {
		t.Errorf("deleted record still there: %q", b)
	}
	if err := os.WriteFile(path, []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "b.ualice"); err == nil {
		t.Error("a corrupt token file loaded as empty")
	}
	if _, err := NewFileTokenStore(""); !errors.Is(err, failure.Config) {
		t.Errorf("empty path: %v", err)
	}
}

// TestAuthRefusedMessage: a 401 no login answers says what to do, for
// each way the server was configured.
func TestAuthRefusedMessage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	tests := []struct {
		name string
		sc   ServerConfig
		want string
	}{
		{"static header", ServerConfig{URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer old"}}, "refused the Authorization header of its configuration"},
		{"login disabled", ServerConfig{URL: srv.URL, Auth: &Auth{Disabled: true}}, `remove "oauth": {"disabled": true}`},
		{"sse", ServerConfig{Type: "sse", URL: srv.URL}, "check the headers of its configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.sc.Name = "api"
			m := newManager(t, quickConfig(tt.sc))
			st := m.Status()[0]
			if !errors.Is(st.Err, failure.PermissionDenied) || !strings.Contains(st.Err.Error(), tt.want) {
				t.Fatalf("status %s, %v; want PermissionDenied saying %q", st.State, st.Err, tt.want)
			}
		})
	}
}
