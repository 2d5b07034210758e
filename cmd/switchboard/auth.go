package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// authOptions configure the OAuth 2.1 resource server checks: JWT access
// tokens signed by the authorization server, for this resource (audience).
type authOptions struct {
	audience    string
	issuer      string
	keyFile     string
	secretEnv   string
	metadataURL string
	authServers list
	scopes      list
}

func (a *authOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&a.audience, "auth-audience", "", "require bearer JWTs whose aud names this resource (the gateway's URL)")
	fs.StringVar(&a.issuer, "auth-issuer", "", "require this iss in bearer JWTs")
	fs.StringVar(&a.keyFile, "auth-key", "", "PEM public key (RSA, EC or Ed25519) verifying the JWTs")
	fs.StringVar(&a.secretEnv, "auth-hs256-secret-env", "", "environment variable holding an HS256 secret verifying the JWTs")
	fs.StringVar(&a.metadataURL, "auth-metadata-url", "", "URL of this resource's OAuth protected-resource metadata (sent in WWW-Authenticate; served at /.well-known/oauth-protected-resource)")
	fs.Var(&a.authServers, "auth-server", "authorization server named in the resource metadata (repeatable)")
	fs.Var(&a.scopes, "auth-scope", "scope every token must have (repeatable)")
}

// enabled reports whether any -auth-* flag was given: then tokens are
// required, and verifier names what is missing (an -auth-issuer or
// -auth-scope alone must not leave the gateway open).
func (a *authOptions) enabled() bool {
	return a.audience != "" || a.keyFile != "" || a.secretEnv != "" || a.issuer != "" ||
		a.metadataURL != "" || len(a.authServers) > 0 || len(a.scopes) > 0
}

// verifier checks a bearer JWT: signature (the one configured algorithm
// family), expiry, audience and issuer. Every refusal wraps
// auth.ErrInvalidToken, which go-sdk answers with 401.
func (a *authOptions) verifier() (auth.TokenVerifier, error) {
	if a.audience == "" {
		return nil, errors.New("-auth-audience is required with bearer tokens (a token for another resource must be refused)")
	}
	var key any
	var methods []string
	switch {
	case a.keyFile != "" && a.secretEnv != "":
		return nil, errors.New("give -auth-key or -auth-hs256-secret-env, not both")
	case a.keyFile != "":
		pem, err := os.ReadFile(a.keyFile)
		if err != nil {
			return nil, fmt.Errorf("-auth-key: %w", err)
		}
		if key, methods, err = publicKey(pem); err != nil {
			return nil, fmt.Errorf("-auth-key %s: %w", a.keyFile, err)
		}
	case a.secretEnv != "":
		secret := os.Getenv(a.secretEnv)
		if len(secret) < 32 {
			return nil, fmt.Errorf("-auth-hs256-secret-env: %s must hold at least 32 bytes", a.secretEnv)
		}
		key, methods = []byte(secret), []string{"HS256"}
	default:
		return nil, errors.New("-auth-audience needs -auth-key or -auth-hs256-secret-env to verify tokens")
	}
	return newJWTVerifier(key, methods, a.audience, a.issuer, a.scopes), nil
}

// newJWTVerifier returns the verifier of JWTs signed with key by one of
// methods, for audience (and issuer, when not empty), holding scopes.
func newJWTVerifier(key any, methods []string, audience, issuer string, scopes []string) auth.TokenVerifier {
	opts := []jwt.ParserOption{jwt.WithValidMethods(methods), jwt.WithAudience(audience),
		jwt.WithExpirationRequired(), jwt.WithLeeway(30 * time.Second)}
	if issuer != "" {
		opts = append(opts, jwt.WithIssuer(issuer))
	}
	parser := jwt.NewParser(opts...)
	return func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if len(token) > 16<<10 {
			return nil, fmt.Errorf("%w: token too long", auth.ErrInvalidToken)
		}
		claims := jwt.MapClaims{}
		if _, err := parser.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return key, nil }); err != nil {
			return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
		}
		info := &auth.TokenInfo{Extra: map[string]any{}}
		if sub, _ := claims.GetSubject(); sub != "" {
			info.UserID = sub
		}
		if exp, _ := claims.GetExpirationTime(); exp != nil {
			info.Expiration = exp.Time
		}
		if s, ok := claims["scope"].(string); ok {
			info.Scopes = strings.Fields(s)
		}
		for _, want := range scopes {
			if !contains(info.Scopes, want) {
				return nil, fmt.Errorf("%w: scope %q missing", auth.ErrInvalidToken, want)
			}
		}
		return info, nil
	}
}

// publicKey parses a PEM public key and names the JWT algorithms it verifies.
func publicKey(pem []byte) (any, []string, error) {
	if k, err := jwt.ParseRSAPublicKeyFromPEM(pem); err == nil {
		return k, []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}, nil
	}
	if k, err := jwt.ParseECPublicKeyFromPEM(pem); err == nil {
		return k, []string{"ES256", "ES384", "ES512"}, nil
	}
	if k, err := jwt.ParseEdPublicKeyFromPEM(pem); err == nil {
		return k, []string{"EdDSA"}, nil
	}
	return nil, nil, errors.New("not a PEM RSA, EC or Ed25519 public key")
}

// metadataHandler serves the protected-resource metadata (RFC 9728).
func (a *authOptions) metadataHandler() http.Handler {
	return auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{Resource: a.audience,
		AuthorizationServers: a.authServers, ScopesSupported: a.scopes, BearerMethodsSupported: []string{"header"}})
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
