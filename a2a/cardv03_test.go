package a2a

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestV03CardAdvertisesREST: the card's 0.3 view lists the 0.3 REST
// interface, so a 0.3 client (@a2a-js/sdk 0.3.14) that prefers HTTP+JSON
// uses it, and one without a preference uses the preferred JSON-RPC; the
// server sees each request on the binding the client chose.
func TestV03CardAdvertisesREST(t *testing.T) {
	needNode(t)
	srv, _ := newWorker(t, ServerConfig{})
	var mu sync.Mutex
	var paths []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/.well-known/") {
			mu.Lock()
			paths = append(paths, r.URL.Path)
			mu.Unlock()
		}
		srv.ServeHTTP(w, r)
	}))
	defer hs.Close()

	resp, err := http.Get(hs.URL + cardPath)
	if err != nil {
		t.Fatal(err)
	}
	var card struct {
		URL                  string `json:"url"`
		PreferredTransport   string `json:"preferredTransport"`
		AdditionalInterfaces []struct {
			URL       string `json:"url"`
			Transport string `json:"transport"`
		} `json:"additionalInterfaces"`
	}
	err = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	rest := false
	for _, in := range card.AdditionalInterfaces {
		rest = rest || (in.Transport == "HTTP+JSON" && in.URL == hs.URL+restPath)
	}
	if card.PreferredTransport != "JSONRPC" || card.URL != hs.URL+jsonrpcPath || !rest {
		t.Fatalf("0.3 card view = %+v", card)
	}

	tests := []struct {
		preferred, transport, path string
	}{
		{"HTTP+JSON", "RestTransport", restPath + "/v1/message:send"},
		{"", "JsonRpcTransport", jsonrpcPath},
	}
	for _, tc := range tests {
		t.Run("prefers "+tc.preferred, func(t *testing.T) {
			mu.Lock()
			paths = nil
			mu.Unlock()
			args := []string{hs.URL}
			if tc.preferred != "" {
				args = append(args, tc.preferred)
			}
			out := runNode(t, "a2a-v03-client.mjs", args...)
			var r struct {
				Transport, State, Text, Error string
			}
			if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &r); err != nil || r.Error != "" {
				t.Fatalf("client: %s", out)
			}
			if strings.TrimLeft(r.Transport, "_") != tc.transport || r.State != "completed" || !strings.Contains(r.Text, "echo: hello from js 0.3") {
				t.Fatalf("client = %+v", r)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(paths) != 2 || paths[0] != tc.path { // send, then get
				t.Fatalf("server saw %v, want %s first", paths, tc.path)
			}
			for _, p := range paths {
				if !strings.HasPrefix(p, strings.TrimSuffix(tc.path, "/v1/message:send")) {
					t.Errorf("request on another binding: %s", p)
				}
			}
		})
	}
}
