package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/switchboard-dev/switchboard/internal/telemetry"
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
	// Tenant, if set, is the tenant (A2A 1.0) of the messages sent to the
	// peer when the card's interface names none (a2a-go prefers the
	// card's); empty: the card's, else the tenant of the request the
	// calling run serves, if any.
	Tenant string `json:"tenant,omitempty"`
	// CardTrust, if set, replaces ToolsetConfig.CardTrust for this peer.
	CardTrust *CardTrust `json:"-"`
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

// peerTransport adds a peer's headers to every request and repairs what
// a2a-go's REST clients misread:
//   - a2a-go decodes error bodies only when their Content-Type is
//     application/json: application/a2a+json (or application/problem+json)
//     error bodies are relabelled so that the typed A2A error survives;
//   - a 0.3 error body ({"code": -32001, "message": ...}, the JS SDK 0.3's)
//     is rewritten in the AIP-193 form a2a-go decodes, so that "task not
//     found" is not read as an internal error;
//   - its 1.0 REST client accepts only 200 and its 0.3 REST client only 200
//     and 204: 201 and 202 (the JS SDK's create, send and cancel) become 200,
//     and 204 (the JS SDK's delete) becomes 200 with the body {}.
//
// It also records, for a call that asked for it (withDelivery), whether
// the request reached the peer, so that a send is never repeated when the
// peer may have acted on it.
type peerTransport struct {
	base    http.RoundTripper
	headers http.Header
	peer    string            // the peer's name, for exts
	exts    []ClientExtension // asked for in A2A-Extensions; told what was activated
}

func (t *peerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 || len(t.exts) > 0 || telemetry.Active(r.Context()) {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header[k] = v
		}
		if len(t.exts) > 0 {
			uris := splitExtensions(r.Header)
			for _, e := range t.exts {
				if u := e.URI(); !slices.Contains(uris, u) {
					uris = append(uris, u)
				}
			}
			r.Header.Set(extensionsHeader, strings.Join(uris, ", "))
		}
		telemetry.InjectHTTP(r.Context(), r.Header) // the peer continues the caller's trace
	}
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/pushNotificationConfigs") {
		r = unionPushConfigBody(r)
	}
	dl, _ := r.Context().Value(deliveryKey{}).(*delivery)
	if dl != nil {
		r = r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{
			WroteRequest: func(i httptrace.WroteRequestInfo) {
				if i.Err == nil {
					dl.wrote.Store(true)
				}
			},
		}))
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if len(t.exts) > 0 && r.Method == http.MethodPost {
		active := splitExtensions(resp.Header)
		for _, e := range t.exts {
			e.Activated(r.Context(), t.peer, slices.Contains(active, e.URI()))
		}
	}
	if dl != nil {
		dl.status.Store(int32(resp.StatusCode))
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case resp.StatusCode == http.StatusCreated || resp.StatusCode == http.StatusAccepted:
		resp.StatusCode, resp.Status = http.StatusOK, "200 OK"
	case resp.StatusCode == http.StatusNoContent:
		resp.Body.Close()
		resp.StatusCode, resp.Status = http.StatusOK, "200 OK"
		resp.Body = io.NopCloser(strings.NewReader("{}"))
		resp.ContentLength = 2
		resp.Header.Set("Content-Type", "application/json")
		resp.Header.Del("Content-Length")
	case resp.StatusCode >= 400 && isJSONType(ct):
		normalizeRESTError(resp)
	}
	if resp.StatusCode == http.StatusOK && strings.Contains(r.Header.Get("Accept"), "text/event-stream") &&
		(strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "application/a2a+json")) {
		asSSE(resp)
	}
	return resp, nil
}

func isJSONType(ct string) bool {
	return strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "application/a2a+json") ||
		strings.HasPrefix(ct, "application/problem+json")
}

// unionPushConfigBody repairs a 0.3 REST create-push-config request:
// a2a-go sends the whole request message ({"parent", "configId",
// "config": {"name", "pushNotificationConfig"}}), which the JS SDK 0.3
// requires, while the 0.3 proto's HTTP rule (body: "config") and the JS SDK
// 1.x's 0.3 layer want the config alone. The config's fields are copied to
// the top level so that both read it. Any other request is returned as is.
func unionPushConfigBody(r *http.Request) *http.Request {
	if r.Body == nil || r.GetBody == nil || r.ContentLength <= 0 || r.ContentLength > maxErrorBody {
		return r
	}
	body, err := r.GetBody()
	if err != nil {
		return r
	}
	b, err := io.ReadAll(io.LimitReader(body, maxErrorBody))
	body.Close()
	var req map[string]json.RawMessage
	if err != nil || json.Unmarshal(b, &req) != nil || req["parent"] == nil || req["config"] == nil {
		return r
	}
	var cfg map[string]json.RawMessage
	if json.Unmarshal(req["config"], &cfg) != nil || cfg["pushNotificationConfig"] == nil {
		return r
	}
	for k, v := range cfg {
		if _, taken := req[k]; !taken {
			req[k] = v
		}
	}
	out, err := json.Marshal(req)
	if err != nil {
		return r
	}
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(out))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out)), nil }
	r.ContentLength = int64(len(out))
	return r
}

// maxErrorBody bounds the error body read to normalise it.
const maxErrorBody = 64 << 10

// legacyCodes are the A2A errors of JSON-RPC codes, as 0.3 REST error
// bodies carry them.
var legacyCodes = map[int]error{
	-32700: a2ago.ErrParseError,
	-32600: a2ago.ErrInvalidRequest,
	-32601: a2ago.ErrMethodNotFound,
	-32602: a2ago.ErrInvalidParams,
	-32603: a2ago.ErrInternalError,
	-32000: a2ago.ErrServerError,
	-32001: a2ago.ErrTaskNotFound,
	-32002: a2ago.ErrTaskNotCancelable,
	-32003: a2ago.ErrPushNotificationNotSupported,
	-32004: a2ago.ErrUnsupportedOperation,
	-32005: a2ago.ErrUnsupportedContentType,
	-32006: a2ago.ErrInvalidAgentResponse,
	-32007: a2ago.ErrExtendedCardNotConfigured,
	-32008: a2ago.ErrExtensionSupportRequired,
	-32009: a2ago.ErrVersionNotSupported,
	-31401: a2ago.ErrUnauthenticated,
	-31403: a2ago.ErrUnauthorized,
}

// normalizeRESTError labels a JSON error body application/json and
// rewrites a 0.3 body ({"code": <JSON-RPC code>, "message": ...}) as the
// AIP-193 body of the same A2A error. Anything else is left as it is.
func normalizeRESTError(resp *http.Response) {
	resp.Header.Set("Content-Type", "application/json")
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	if err == nil {
		if b, ok := legacyErrorBody(body, resp.StatusCode); ok {
			body = b
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
}

// legacyErrorBody converts a 0.3 REST error body; ok is false when body is
// not one.
func legacyErrorBody(body []byte, status int) (out []byte, ok bool) {
	var v struct {
		Code    *int            `json:"code"`
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil || v.Code == nil || len(v.Error) > 0 {
		return nil, false
	}
	sentinel, known := legacyCodes[*v.Code]
	if !known {
		sentinel = a2ago.ErrInternalError
	}
	msg := v.Message
	if msg == "" {
		msg = sentinel.Error()
	}
	out, err := json.Marshal(map[string]any{"error": map[string]any{
		"code": status, "message": msg,
		"details": []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
			"reason": a2ago.ErrorReason(sentinel), "domain": a2ago.ProtocolDomain}},
	}})
	return out, err == nil
}

// delivery records what became of one call's HTTP request: whether it was
// written to the peer, and the status of the last answer.
type delivery struct {
	wrote  atomic.Bool
	status atomic.Int32
}

type deliveryKey struct{}

// withDelivery makes the peer transport record the delivery of the
// requests made with the returned context.
func withDelivery(ctx context.Context) (context.Context, *delivery) {
	d := &delivery{}
	return context.WithValue(ctx, deliveryKey{}, d), d
}

// unprocessed reports whether the peer cannot have acted on the request:
// it was never written, or the peer answered 429 or 503, which say that it
// was not processed.
func (d *delivery) unprocessed() bool {
	if !d.wrote.Load() {
		return true
	}
	s := d.status.Load()
	return s == http.StatusTooManyRequests || s == http.StatusServiceUnavailable
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
