package openai

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// TestClassifyErr: langchaingo's errors and the text of its failures are
// classified into the taxonomy, without the key.
func TestClassifyErr(t *testing.T) {
	c := wire.Classifier{Name: "p/m", Scrub: wire.NewScrubber("secret-key-0123456789"), Library: langChainKind}
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
			fe := c.Err(tt.ctx, tt.err)
			if fe.Kind != tt.kind || fe.Source != failure.SourceModel || fe.Name != "p/m" {
				t.Errorf("got %v (%s/%s), want kind %v", fe, fe.Source, fe.Name, tt.kind)
			}
			if strings.Contains(fe.Error(), "secret-key-0123456789") {
				t.Errorf("leaks the key: %v", fe)
			}
		})
	}
}
