package oauth

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// challenge is what a 401 or 403 answer's WWW-Authenticate header says.
type challenge struct {
	metadataURL string
	scopes      []string
	err         string
}

func parseChallenge(resp *http.Response) (challenge, error) {
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return challenge{}, fmt.Errorf("the server's WWW-Authenticate header is malformed: %w", err)
	}
	var c challenge
	for _, ch := range cs {
		if u := ch.Params["resource_metadata"]; u != "" && c.metadataURL == "" {
			c.metadataURL = u
		}
		if ch.Scheme != "bearer" {
			continue
		}
		if s := ch.Params["scope"]; s != "" && c.scopes == nil {
			c.scopes = strings.Fields(s)
		}
		if e := ch.Params["error"]; e != "" && c.err == "" {
			c.err = e
		}
	}
	return c, nil
}

// discovery is what the protected resource and its authorization server
// publish.
type discovery struct {
	prm *oauthex.ProtectedResourceMetadata
	asm *oauthex.AuthServerMeta
}

// discover finds the protected resource metadata (RFC 9728: the
// challenge's resource_metadata, then the path-inserted and root
// well-known URLs; the 2025-03-26 fallback makes the server's origin the
// authorization server) and the authorization server's metadata (RFC 8414
// and OpenID discovery, path-inserted variants; without any, the
// 2025-03-26 default endpoints).
func discover(ctx context.Context, c *http.Client, ch challenge, serverURL string) (*discovery, error) {
	prm, err := resourceMetadata(ctx, c, ch.metadataURL, serverURL)
	if err != nil {
		return nil, err
	}
	issuer := prm.AuthorizationServers[0]
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, c)
	if err != nil {
		return nil, fmt.Errorf("the authorization server's metadata could not be read: %w", err)
	}
	if asm == nil {
		asm = &oauthex.AuthServerMeta{Issuer: issuer, AuthorizationEndpoint: issuer + "/authorize",
			TokenEndpoint: issuer + "/token", RegistrationEndpoint: issuer + "/register"}
	}
	return &discovery{prm: prm, asm: asm}, nil
}

func resourceMetadata(ctx context.Context, c *http.Client, fromChallenge, serverURL string) (*oauthex.ProtectedResourceMetadata, error) {
	ru, err := url.Parse(serverURL)
	if err != nil {
		return nil, fmt.Errorf("the server URL %q is not a URL: %w", serverURL, err)
	}
	type try struct{ url, resource string }
	var tries []try
	if fromChallenge != "" {
		tries = append(tries, try{fromChallenge, serverURL})
	}
	mu := *ru
	mu.RawQuery, mu.Fragment = "", ""
	mu.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
	tries = append(tries, try{mu.String(), serverURL})
	root := *ru
	root.Path, root.RawQuery, root.Fragment = "", "", ""
	mu.Path = "/.well-known/oauth-protected-resource"
	tries = append(tries, try{mu.String(), root.String()})
	for _, t := range tries {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, t.url, t.resource, c)
		if err != nil || prm == nil {
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("the protected resource metadata at %s names no authorization server", t.url)
		}
		return prm, nil
	}
	return &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{root.String()}, Resource: serverURL}, nil
}
