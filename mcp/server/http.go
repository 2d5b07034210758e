package server

import (
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionIdle closes an HTTP session that received no request for this long.
const sessionIdle = 30 * time.Minute

// Handler serves the server over Streamable HTTP (mount it at /mcp).
//
// With Config.TokenVerifier set, every request needs a valid bearer token
// (auth.RequireBearerToken: 401 with WWW-Authenticate naming the resource
// metadata, 403 for missing scopes). DNS-rebinding protection is go-sdk's
// (a request to a loopback address with a non-loopback Host is refused
// with 403); cross-origin browser requests are refused unless their origin
// is in Config.AllowedOrigins (http.CrossOriginProtection). Request bodies
// are bounded by go-sdk's default (gomcp.DefaultMaxRequestBodyBytes), and
// idle sessions end after 30 minutes.
//
// A stateful session's streams are resumable: a client (before protocol
// revision 2026-07-28, which has no resumption) whose response or GET
// stream was cut reconnects with Last-Event-ID and gets the events it
// missed, its call's result included, from the server's most recent
// 10 MiB of events (go-sdk's MemoryEventStore; a session's events go when
// the session ends). A client resuming past what is kept is answered 400.
// From 2026-07-28 on, a client that closes a call's response stream
// cancels the call, as that revision requires.
func (s *Server) Handler() http.Handler {
	opts := &gomcp.StreamableHTTPOptions{Stateless: s.cfg.Stateless, SessionTimeout: sessionIdle, PropagateRequestCancellation: true}
	if !s.cfg.Stateless {
		opts.EventStore = s.events
	}
	var h http.Handler = gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return s.mcp }, opts)
	cop := http.NewCrossOriginProtection()
	for _, o := range s.cfg.AllowedOrigins {
		// AddTrustedOrigin fails only on a malformed origin, which New
		// has already refused.
		_ = cop.AddTrustedOrigin(o)
	}
	if s.runnerTools != nil && s.cfg.Tasks != nil {
		h = s.listenTasks(h)
	}
	h = cop.Handler(h)
	if s.cfg.TokenVerifier != nil {
		h = auth.RequireBearerToken(s.cfg.TokenVerifier, s.cfg.AuthOptions)(h)
	}
	return h
}
