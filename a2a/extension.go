package a2a

import (
	"context"
	"net/http"
	"slices"
	"strings"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
)

// extensionsHeader is the A2A service parameter naming extensions: the
// client lists those it asks for, the server those it activated.
const extensionsHeader = "A2A-Extensions"

// Extension is an A2A extension a [Server] supports ([ServerConfig].Extensions):
// declared on its card (capabilities.extensions), and activated for each
// request whose A2A-Extensions header asks for it. The activated ones are
// echoed in the response's A2A-Extensions header. A Required extension
// that a request does not ask for is refused by a2a-go
// (ExtensionSupportRequiredError).
type Extension interface {
	// Declaration is the extension's entry on the card (URI, description,
	// required, params).
	Declaration() a2ago.AgentExtension
	// Activate is called for a request that asks for the extension, with
	// the request's context; it returns the context a2a-go handles the
	// request with (nil: unchanged; a run started by the request does not
	// inherit it, runs outlive requests) and whether the extension is
	// active for the request.
	Activate(ctx context.Context, r *http.Request) (context.Context, bool)
}

// ClientExtension is an A2A extension a [Toolset] asks its peers for
// ([ToolsetConfig].Extensions): its URI goes in the A2A-Extensions header
// of every request, and Activated tells it, after each answer, whether the
// peer activated it.
type ClientExtension interface {
	// URI names the extension.
	URI() string
	// Activated reports, for one answer of peer, whether its
	// A2A-Extensions header named the extension. It must not block.
	Activated(ctx context.Context, peer string, active bool)
}

// splitExtensions reads the URIs of A2A-Extensions headers (comma
// separated, one or more header lines).
func splitExtensions(h http.Header) []string {
	var out []string
	for _, v := range h.Values(extensionsHeader) {
		for _, u := range strings.Split(v, ",") {
			if u = strings.TrimSpace(u); u != "" && !slices.Contains(out, u) {
				out = append(out, u)
			}
		}
	}
	return out
}

// withExtensions activates the server's extensions a request asks for and
// echoes the activated ones in the response's A2A-Extensions header.
func (s *Server) withExtensions(next http.Handler) http.Handler {
	if len(s.cfg.Extensions) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requested := splitExtensions(r.Header)
		if len(requested) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		ctx := r.Context()
		var active []string
		for _, e := range s.cfg.Extensions {
			uri := e.Declaration().URI
			if !slices.Contains(requested, uri) {
				continue
			}
			c, ok := e.Activate(ctx, r)
			if c != nil {
				ctx = c
			}
			if ok {
				active = append(active, uri)
			}
		}
		if len(active) > 0 {
			w.Header().Set(extensionsHeader, strings.Join(active, ", "))
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// declarations are the card entries of the server's extensions.
func declarations(exts []Extension) []a2ago.AgentExtension {
	var out []a2ago.AgentExtension
	for _, e := range exts {
		out = append(out, e.Declaration())
	}
	return out
}
