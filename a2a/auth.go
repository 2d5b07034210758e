package a2a

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// Auth authenticates callers of a Server with API keys or bearer tokens.
// Every operation is checked (AUTH-SERVER-002); the public agent card is
// not. A request without usable credentials gets 401 with a
// WWW-Authenticate header; a known caller that Authorize refuses gets 403.
// Tasks are scoped to the caller: another caller's task is "not found".
type Auth struct {
	// APIKeys maps each accepted API key to the caller's name.
	APIKeys map[string]string
	// APIKeyHeader is the header carrying the API key (default "X-API-Key").
	APIKeyHeader string
	// BearerTokens maps each accepted bearer token to the caller's name.
	BearerTokens map[string]string
	// Authorize, if set, decides whether an authenticated caller may use
	// the agent at all.
	Authorize func(r *http.Request, caller string) bool
}

type callerKey struct{}

// Caller returns the authenticated caller of a request served by a Server.
func Caller(ctx context.Context) (string, bool) {
	c, ok := ctx.Value(callerKey{}).(string)
	return c, ok
}

// WithCaller returns ctx naming caller as the authenticated caller of a
// request that another binding than the Server's HTTP handler (package
// a2a/grpc) authenticated and hands to [Server.RequestHandler]: the
// request's [Caller], whose tasks the task store keeps apart from other
// callers' and whose tasks MaxTasksPerCaller counts, with those it runs
// over HTTP under the same name. An empty caller leaves ctx as it is.
func WithCaller(ctx context.Context, caller string) context.Context {
	if caller == "" {
		return ctx
	}
	return context.WithValue(ctx, callerKey{}, caller)
}

func (a *Auth) validate() error {
	if a == nil {
		return nil
	}
	if len(a.APIKeys) == 0 && len(a.BearerTokens) == 0 {
		return errors.New("a2a.Auth needs at least one API key or bearer token")
	}
	for k, v := range a.APIKeys {
		if k == "" || v == "" {
			return errors.New("a2a.Auth: API keys and their callers must be non-empty")
		}
	}
	for k, v := range a.BearerTokens {
		if k == "" || v == "" {
			return errors.New("a2a.Auth: bearer tokens and their callers must be non-empty")
		}
	}
	return nil
}

func (a *Auth) header() string {
	if a.APIKeyHeader != "" {
		return a.APIKeyHeader
	}
	return "X-API-Key"
}

// lookup finds a credential in constant time per entry.
func lookup(m map[string]string, cred string) (string, bool) {
	found := ""
	for k, v := range m {
		if subtle.ConstantTimeCompare([]byte(k), []byte(cred)) == 1 {
			found = v
		}
	}
	return found, found != ""
}

// authenticate returns the caller, and whether credentials were presented.
func (a *Auth) authenticate(r *http.Request) (caller string, presented bool) {
	if h := r.Header.Get("Authorization"); h != "" && len(a.BearerTokens) > 0 {
		presented = true
		if tok, ok := bearerToken(h); ok {
			if c, ok := lookup(a.BearerTokens, tok); ok {
				return c, true
			}
		}
	}
	if k := r.Header.Get(a.header()); k != "" && len(a.APIKeys) > 0 {
		presented = true
		if c, ok := lookup(a.APIKeys, k); ok {
			return c, true
		}
	}
	return "", presented
}

// bearerToken is the token of an Authorization header using the Bearer
// scheme, whose name is case-insensitive (RFC 9110 11.1, RFC 6750 2.1);
// the scheme is separated from the token by one or more spaces.
func bearerToken(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// middleware guards a binding; nil Auth lets everything through.
func (a *Auth) middleware(b binding, next http.Handler) http.Handler {
	if a == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller, presented := a.authenticate(r)
		if caller == "" {
			var ch []string
			if len(a.BearerTokens) > 0 {
				ch = append(ch, `Bearer realm="a2a"`)
			}
			if len(a.APIKeys) > 0 {
				ch = append(ch, `APIKey realm="a2a", header="`+a.header()+`"`)
			}
			w.Header().Set("WWW-Authenticate", strings.Join(ch, ", "))
			msg := "authentication required: send a bearer token or an API key"
			if presented {
				msg = "the credentials sent are not valid"
			}
			writeProtocolError(w, r, b, a2ago.ErrUnauthenticated, msg)
			return
		}
		if a.Authorize != nil && !a.Authorize(r, caller) {
			writeProtocolError(w, r, b, a2ago.ErrUnauthorized, "the caller is not allowed to use this agent")
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, caller)))
	})
}

// describe adds the security schemes to a card.
func (a *Auth) describe(card *a2ago.AgentCard) {
	if a == nil {
		return
	}
	card.SecuritySchemes = a2ago.NamedSecuritySchemes{}
	var reqs a2ago.SecurityRequirementsOptions
	if len(a.BearerTokens) > 0 {
		card.SecuritySchemes["bearer"] = a2ago.HTTPAuthSecurityScheme{Scheme: "Bearer", Description: "A bearer token issued by the operator."}
		reqs = append(reqs, a2ago.SecurityRequirements{"bearer": {}})
	}
	if len(a.APIKeys) > 0 {
		card.SecuritySchemes["apiKey"] = a2ago.APIKeySecurityScheme{Location: a2ago.APIKeySecuritySchemeLocationHeader, Name: a.header(),
			Description: "An API key issued by the operator."}
		reqs = append(reqs, a2ago.SecurityRequirements{"apiKey": {}})
	}
	card.SecurityRequirements = reqs
}

// userInterceptor gives a2a-go the authenticated caller, which scopes the
// task store (owner) and reaches the executor.
type userInterceptor struct {
	a2asrv.PassthroughCallInterceptor
}

func (userInterceptor) Before(ctx context.Context, cc *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	if c, ok := Caller(ctx); ok {
		cc.User = a2asrv.NewAuthenticatedUser(c, nil)
	}
	return ctx, nil, nil
}
