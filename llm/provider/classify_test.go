package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/switchboard-dev/switchboard/failure"
)

func TestScrub(t *testing.T) {
	key := "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234"
	s := newScrubber(key, "ab") // a secret too short to scrub safely is ignored
	tests := []struct {
		in, want string
	}{
		{"Incorrect API key provided: " + key + ".", "Incorrect API key provided: [REDACTED]."},
		{"Incorrect API key provided: sk-proj-********************Wx1234.", "Incorrect API key provided: [REDACTED]"},
		{"key ...UvWx1234 was revoked", "key [REDACTED] was revoked"},
		{"no secret here, about tabs", "no secret here, about tabs"},
		{"Authorization: Bearer abcdefghijklmnop", "Authorization: [REDACTED]"},
	}
	for _, tt := range tests {
		if got := s.scrub(tt.in); got != tt.want {
			t.Errorf("scrub(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	err := s.scrubErr(fmt.Errorf("call failed: %w: key %s", context.DeadlineExceeded, key))
	if strings.Contains(err.Error(), key) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("scrubErr = %v", err)
	}
	plain := errors.New("plain")
	if s.scrubErr(plain) != plain {
		t.Error("an error without secrets was replaced")
	}
}

func TestStatusKind(t *testing.T) {
	tests := []struct {
		code int
		kind failure.Kind
	}{
		{429, failure.Transient}, {500, failure.Transient}, {502, failure.Transient}, {529, failure.Transient},
		{401, failure.PermissionDenied}, {403, failure.PermissionDenied}, {408, failure.Timeout},
		{400, failure.Model}, {404, failure.Model}, {413, failure.Model}, {422, failure.Model},
	}
	for _, tt := range tests {
		if got := statusKind(tt.code); got != tt.kind {
			t.Errorf("statusKind(%d) = %v, want %v", tt.code, got, tt.kind)
		}
	}
}

func TestClassifyErr(t *testing.T) {
	c := classifier{name: "p/m", scrub: newScrubber("secret-key-0123456789")}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		kind failure.Kind
	}{
		{"library text with a status", context.Background(), errors.New("API returned unexpected status code: 429: slow down"), failure.Transient},
		{"library text with 401", context.Background(), errors.New("API returned unexpected status code: 401: bad key secret-key-0123456789"), failure.PermissionDenied},
		{"langchaingo rate limit", context.Background(), llms.NewError(llms.ErrCodeRateLimit, "x", "Rate limit exceeded"), failure.Transient},
		{"langchaingo auth", context.Background(), llms.NewError(llms.ErrCodeAuthentication, "x", "Invalid key"), failure.PermissionDenied},
		{"langchaingo other", context.Background(), llms.NewError(llms.ErrCodeContentFilter, "x", "blocked"), failure.Model},
		{"hidden cancellation", cancelled, errors.New("request cancelled"), failure.Canceled},
		{"unknown", context.Background(), errors.New("no response"), failure.Model},
		{"already classified", context.Background(), failure.New(failure.Protocol, "", "bad"), failure.Protocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fe := c.err(tt.ctx, tt.err)
			if fe.Kind != tt.kind || fe.Source != failure.SourceModel || fe.Name != "p/m" {
				t.Errorf("got %v (%s/%s), want kind %v", fe, fe.Source, fe.Name, tt.kind)
			}
			if strings.Contains(fe.Error(), "secret-key-0123456789") {
				t.Errorf("leaks the key: %v", fe)
			}
		})
	}
}
