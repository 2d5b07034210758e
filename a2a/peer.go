package a2a

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
)

// Peer describes one remote A2A agent.
type Peer struct {
	// Name identifies the peer in tool names ("a2a__<name>"), provenance
	// and failures. Letters, digits, '_' and '-'.
	Name string `json:"name"`
	// URL is the peer's base URL: its card is read from
	// URL + "/.well-known/agent-card.json" (or the legacy agent.json).
	URL string `json:"url"`
	// CardPath overrides the well-known card path.
	CardPath string `json:"card_path,omitempty"`
	// Card, if set, is used as is and nothing is fetched.
	Card *a2ago.AgentCard `json:"-"`
	// APIKeyEnv names the environment variable holding an API key, sent in
	// the APIKeyHeader header (default "X-API-Key").
	APIKeyEnv    string `json:"api_key_env,omitempty"`
	APIKeyHeader string `json:"api_key_header,omitempty"`
	// BearerTokenEnv names the environment variable holding a bearer token.
	BearerTokenEnv string `json:"bearer_token_env,omitempty"`
	// Headers are sent with every request (for example a tenant header).
	Headers map[string]string `json:"headers,omitempty"`
	// PerSkill makes one tool per skill on the card instead of one per peer.
	PerSkill bool `json:"per_skill,omitempty"`
	// NoStreaming sends blocking requests even to a streaming peer.
	NoStreaming bool `json:"no_streaming,omitempty"`
	// Description replaces the card's description in the tool's spec.
	Description string `json:"description,omitempty"`
	// PreferREST picks HTTP+JSON over JSON-RPC when the peer offers both.
	PreferREST bool `json:"prefer_rest,omitempty"`
}

var peerName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func (p Peer) validate() error {
	if !peerName.MatchString(p.Name) {
		return fmt.Errorf("peer name %q must be 1-64 letters, digits, '_' or '-'", p.Name)
	}
	if p.URL == "" && p.Card == nil {
		return fmt.Errorf("peer %q needs a URL or a card", p.Name)
	}
	if p.APIKeyEnv != "" && os.Getenv(p.APIKeyEnv) == "" {
		return fmt.Errorf("peer %q: environment variable %s (its API key) is empty", p.Name, p.APIKeyEnv)
	}
	if p.BearerTokenEnv != "" && os.Getenv(p.BearerTokenEnv) == "" {
		return fmt.Errorf("peer %q: environment variable %s (its bearer token) is empty", p.Name, p.BearerTokenEnv)
	}
	return nil
}

// headers returns the headers sent to the peer, credentials included.
func (p Peer) headers() http.Header {
	h := http.Header{}
	for k, v := range p.Headers {
		h.Set(k, v)
	}
	if p.APIKeyEnv != "" {
		name := p.APIKeyHeader
		if name == "" {
			name = "X-API-Key"
		}
		h.Set(name, os.Getenv(p.APIKeyEnv))
	}
	if p.BearerTokenEnv != "" {
		h.Set("Authorization", "Bearer "+os.Getenv(p.BearerTokenEnv))
	}
	return h
}

// peerTransport adds a peer's headers to every request and works around
// a2a-go's REST client, which decodes error bodies only when their
// Content-Type is application/json: an application/a2a+json (or
// application/problem+json) error body is relabelled so that the typed A2A
// error survives.
type peerTransport struct {
	base    http.RoundTripper
	headers http.Header
}

func (t *peerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header[k] = v
		}
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	ct := resp.Header.Get("Content-Type")
	if resp.StatusCode >= 400 {
		if strings.HasPrefix(ct, "application/a2a+json") || strings.HasPrefix(ct, "application/problem+json") {
			resp.Header.Set("Content-Type", "application/json")
		}
	}
	if resp.StatusCode == http.StatusOK && strings.Contains(r.Header.Get("Accept"), "text/event-stream") &&
		(strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "application/a2a+json")) {
		asSSE(resp)
	}
	return resp, nil
}

// asSSE rewrites a plain JSON answer to a streaming request as one SSE
// event. Peers (the JS SDK) answer a streaming call that fails before the
// stream starts with a plain JSON-RPC error; a2a-go's JSON-RPC client reads
// only SSE and would see an empty stream, losing the error.
func asSSE(resp *http.Response) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxCardBytes))
	resp.Body.Close()
	var compact bytes.Buffer
	if err != nil || json.Compact(&compact, body) != nil {
		compact.Reset()
		compact.WriteString(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"malformed answer to a streaming request"}}`)
	}
	b := append(append([]byte("data: "), compact.Bytes()...), '\n', '\n')
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Header.Set("Content-Type", "text/event-stream")
	resp.Header.Del("Content-Length")
}

// httpClientFor returns the HTTP client used for a peer. No overall
// timeout: streams are long; calls are bounded by their contexts.
func httpClientFor(base *http.Client, p Peer) *http.Client {
	rt := http.DefaultTransport
	c := &http.Client{}
	if base != nil {
		*c = *base
		if base.Transport != nil {
			rt = base.Transport
		}
	}
	c.Transport = &peerTransport{base: rt, headers: p.headers()}
	return c
}

// defaults for ToolsetConfig.
const (
	defaultPollInterval  = 500 * time.Millisecond
	defaultCancelTimeout = 5 * time.Second
)
