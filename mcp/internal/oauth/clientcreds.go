package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

const (
	grantClientCredentials = "client_credentials"
	assertionType          = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	// assertionLife is how long a private_key_jwt client assertion is valid.
	assertionLife = 5 * time.Minute
)

// ParsePrivateKey reads a PEM private key (PKCS #8, SEC 1 EC or PKCS #1
// RSA) for private_key_jwt.
func ParsePrivateKey(pemData []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(pemData)
	if block == nil {
		return nil, errors.New("the private key is not PEM")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		if s, ok := k.(crypto.Signer); ok {
			return s, nil
		}
		return nil, errors.New("the private key's type cannot sign")
	}
	if k, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	return nil, errors.New("the private key is neither PKCS #8, SEC 1 nor PKCS #1")
}

// signingMethod picks the JWS algorithm for key: the configured one, else
// the first the server supports that the key can make, else the key's
// usual one.
func signingMethod(key crypto.Signer, configured string, supported []string) (jwt.SigningMethod, error) {
	var candidates []string
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve.Params().BitSize {
		case 256:
			candidates = []string{"ES256"}
		case 384:
			candidates = []string{"ES384"}
		case 521:
			candidates = []string{"ES512"}
		}
	case *rsa.PrivateKey:
		candidates = []string{"RS256", "PS256", "RS384", "RS512", "PS384", "PS512"}
	case ed25519.PrivateKey:
		candidates = []string{"EdDSA"}
	}
	pick := ""
	switch {
	case configured != "":
		if !slices.Contains(candidates, configured) {
			return nil, fmt.Errorf("signing algorithm %q does not fit the private key", configured)
		}
		pick = configured
	default:
		for _, c := range candidates {
			if slices.Contains(supported, c) {
				pick = c
				break
			}
		}
		if pick == "" && len(candidates) > 0 {
			pick = candidates[0]
		}
	}
	m := jwt.GetSigningMethod(pick)
	if m == nil {
		return nil, errors.New("no signing algorithm fits the private key")
	}
	return m, nil
}

// assertion makes a private_key_jwt client assertion (RFC 7523): issuer
// and subject the client id, audience the authorization server's issuer.
func assertion(method jwt.SigningMethod, key crypto.Signer, clientID, audience string, now time.Time) (string, error) {
	claims := jwt.RegisteredClaims{Issuer: clientID, Subject: clientID, Audience: jwt.ClaimStrings{audience},
		IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(assertionLife)), ID: rand.Text()}
	return jwt.NewWithClaims(method, claims).SignedString(key)
}

// clientCredentials is a configured service identity.
type clientCredentials struct {
	clientID, secret string
	key              crypto.Signer
	alg              string
}

// fetcher returns the function that runs the client_credentials grant
// against the discovered server: private_key_jwt with a key, else
// client_secret_basic or client_secret_post as the server supports.
func (cc *clientCredentials) fetcher(d *discovery, scopes []string, httpc func(context.Context) context.Context) (refresher, oauth2.AuthStyle, error) {
	asm := d.asm
	params := url.Values{}
	if d.prm.Resource != "" {
		params.Set("resource", d.prm.Resource)
	}
	cfg := clientcredentials.Config{ClientID: cc.clientID, TokenURL: asm.TokenEndpoint, Scopes: scopes, EndpointParams: params}
	if cc.key != nil {
		method, err := signingMethod(cc.key, cc.alg, asm.TokenEndpointAuthSigningAlgValuesSupported)
		if err != nil {
			return nil, 0, err
		}
		cfg.AuthStyle = oauth2.AuthStyleInParams
		return func(ctx context.Context, _ *oauth2.Token) (*oauth2.Token, error) {
			a, err := assertion(method, cc.key, cc.clientID, asm.Issuer, time.Now())
			if err != nil {
				return nil, err
			}
			c := cfg
			c.EndpointParams = cloneValues(params)
			c.EndpointParams.Set("client_assertion_type", assertionType)
			c.EndpointParams.Set("client_assertion", a)
			return c.Token(httpc(ctx))
		}, cfg.AuthStyle, nil
	}
	cfg.ClientSecret = cc.secret
	cfg.AuthStyle = secretStyle(asm)
	return func(ctx context.Context, _ *oauth2.Token) (*oauth2.Token, error) { return cfg.Token(httpc(ctx)) }, cfg.AuthStyle, nil
}

// secretStyle picks client_secret_basic (RFC 6749's default) unless the
// server lists only client_secret_post.
func secretStyle(asm *oauthex.AuthServerMeta) oauth2.AuthStyle {
	m := asm.TokenEndpointAuthMethodsSupported
	if !slices.Contains(m, "client_secret_basic") && slices.Contains(m, "client_secret_post") {
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleInHeader
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}
