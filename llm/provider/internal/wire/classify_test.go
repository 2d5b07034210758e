package wire

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
)

func TestScrub(t *testing.T) {
	key := "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234"
	s := NewScrubber(key, "ab") // a secret too short to scrub safely is ignored
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
		if got := s.Scrub(tt.in); got != tt.want {
			t.Errorf("scrub(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	err := s.ScrubErr(fmt.Errorf("call failed: %w: key %s", context.DeadlineExceeded, key))
	if strings.Contains(err.Error(), key) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("scrubErr = %v", err)
	}
	plain := errors.New("plain")
	if s.ScrubErr(plain) != plain {
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
		if got := StatusKind(tt.code); got != tt.kind {
			t.Errorf("StatusKind(%d) = %v, want %v", tt.code, got, tt.kind)
		}
	}
}
