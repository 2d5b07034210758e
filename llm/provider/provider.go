package provider

import (
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// Provider names, as accepted by Config.Provider and SWITCHBOARD_PROVIDER.
//
// Google Gemini is not offered: langchaingo's googleai package pulls in
// Google's generative-ai-go and API client libraries (gRPC, protobuf,
// OpenTelemetry). Measured with Go 1.26 on linux/amd64, a small program
// calling provider.FromEnv builds to 8.3 MB; the same program also calling
// googleai.New builds to 34.7 MB (4.2 times as big). Gemini's
// OpenAI-compatible endpoint works through nameOpenAI instead
// (OPENAI_BASE_URL=https://generativelanguage.googleapis.com/v1beta/openai,
// OPENAI_API_KEY=<Gemini key>, OPENAI_MODEL=gemini-2.5-flash).
const (
	nameOpenAI    = "openai"
	nameAnthropic = "anthropic"
)

// Environment variables read by FromEnv.
const (
	envProvider         = "SWITCHBOARD_PROVIDER"
	envOpenAIKey        = "OPENAI_API_KEY"
	envOpenAIBaseURL    = "OPENAI_BASE_URL"
	envOpenAIModel      = "OPENAI_MODEL"
	envAnthropicKey     = "ANTHROPIC_API_KEY"
	envAnthropicBaseURL = "ANTHROPIC_BASE_URL"
	envAnthropicModel   = "ANTHROPIC_MODEL"
)

// Config configures a provider model. The zero value of every field but
// Provider (and APIKey, for the hosted APIs) means its default.
type Config struct {
	// Provider is "openai" (also any OpenAI-compatible endpoint, with
	// BaseURL) or "anthropic".
	Provider string
	// APIKey authenticates to the provider. It is never written to an
	// error, a log line or a name.
	APIKey string
	// BaseURL overrides the provider's API base URL (OpenAI: up to and
	// including "/v1"; Anthropic: without "/v1").
	BaseURL string
	// Model is the provider's model name (defaults: "gpt-4o-mini" for OpenAI,
	// "claude-sonnet-4-5" for Anthropic).
	Model string
	// MaxTokens is the answer cap used when a Request sets none (Anthropic
	// requires one; default 4096). OpenAI leaves it to the server.
	MaxTokens int
	// HTTPClient sends the requests (default: a new http.Client without a
	// timeout; calls are bounded by their context).
	HTTPClient *http.Client
	// Policy runs every Generate through Policy.Execute: retries and a
	// circuit breaker keyed by the model's name (nil: failure.Default,
	// asked at each use). Under an agent.Agent, which runs each model turn
	// through its own policy too, a failure the provider's policy already
	// retried is not retried again.
	Policy failure.Policy
	// Logger receives debug lines about each call (default: none).
	Logger *zerolog.Logger
}

// New returns the model cfg describes.
func New(cfg Config) (llm.Model, error) {
	switch strings.ToLower(cfg.Provider) {
	case nameOpenAI:
		return newOpenAI(cfg)
	case nameAnthropic:
		return newAnthropic(cfg)
	}
	return nil, failure.New(failure.Config, failure.SourceModel,
		fmt.Sprintf("unknown model provider %q: use %q or %q", cfg.Provider, nameOpenAI, nameAnthropic))
}

// FromEnv returns the model the environment configures; see ConfigFromEnv.
func FromEnv() (llm.Model, error) {
	cfg, err := ConfigFromEnv(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	return New(cfg)
}

// ConfigFromEnv reads a Config through lookup (os.LookupEnv, or a map's
// lookup in tests):
//
//   - OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL select OpenAI, or any
//     OpenAI-compatible server (Ollama: OPENAI_BASE_URL=http://localhost:11434/v1,
//     no key needed);
//   - ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL select Anthropic;
//   - SWITCHBOARD_PROVIDER=openai|anthropic chooses when both are set
//     (otherwise OpenAI wins).
//
// When no provider is configured it returns a *failure.Error of kind
// failure.Config saying how to configure one.
func ConfigFromEnv(lookup func(string) (string, bool)) (Config, error) {
	get := func(k string) string {
		v, _ := lookup(k)
		return strings.TrimSpace(v)
	}
	openai := Config{Provider: nameOpenAI, APIKey: get(envOpenAIKey), BaseURL: get(envOpenAIBaseURL), Model: get(envOpenAIModel)}
	anthropic := Config{Provider: nameAnthropic, APIKey: get(envAnthropicKey), BaseURL: get(envAnthropicBaseURL), Model: get(envAnthropicModel)}
	switch p := strings.ToLower(get(envProvider)); p {
	case nameOpenAI:
		if openai.APIKey == "" && openai.BaseURL == "" {
			return Config{}, failure.New(failure.Config, failure.SourceModel,
				"SWITCHBOARD_PROVIDER=openai but neither OPENAI_API_KEY nor OPENAI_BASE_URL is set")
		}
		return openai, nil
	case nameAnthropic:
		if anthropic.APIKey == "" {
			return Config{}, failure.New(failure.Config, failure.SourceModel,
				"SWITCHBOARD_PROVIDER=anthropic but ANTHROPIC_API_KEY is not set")
		}
		return anthropic, nil
	case "":
	default:
		return Config{}, failure.New(failure.Config, failure.SourceModel,
			fmt.Sprintf("SWITCHBOARD_PROVIDER=%q is not a provider: use %q or %q", p, nameOpenAI, nameAnthropic))
	}
	switch {
	case openai.APIKey != "":
		return openai, nil
	case anthropic.APIKey != "":
		return anthropic, nil
	case openai.BaseURL != "":
		return openai, nil
	}
	return Config{}, failure.New(failure.Config, failure.SourceModel,
		"no model provider is configured: set OPENAI_API_KEY (or OPENAI_BASE_URL for Ollama and other "+
			"OpenAI-compatible servers) or ANTHROPIC_API_KEY; OPENAI_MODEL / ANTHROPIC_MODEL choose the model, "+
			"and SWITCHBOARD_PROVIDER=openai|anthropic chooses when both are set")
}
