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

// envProvider names the provider to use when the environment configures
// several (SWITCHBOARD_PROVIDER=openai|anthropic|...).
const envProvider = "SWITCHBOARD_PROVIDER"

// Config configures a provider model. The zero value of every field but
// Provider (and APIKey, for the hosted APIs) means its default.
type Config struct {
	// Provider is the Name of the [Provider] that serves the model
	// ("openai", "anthropic", ...). A provider's own New ignores it.
	Provider string
	// APIKey authenticates to the provider. It is never written to an
	// error, a log line or a name.
	APIKey string
	// BaseURL overrides the provider's API base URL (each provider's
	// package says what it includes).
	BaseURL string
	// Model is the provider's model name (each provider has a default).
	Model string
	// Region is the cloud region of a provider whose endpoint depends on
	// one (AWS Bedrock: "us-east-1"; "" means the provider's own lookup,
	// such as AWS_REGION); the others ignore it.
	Region string
	// MaxTokens is the answer cap used when a Request sets none (Anthropic
	// requires one; default 4096). Providers that need none leave it to the
	// server.
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

// Provider is one model API that [FromEnv] can choose: each provider's
// package has a Provider function returning its own (openai.Provider(),
// anthropic.Provider(), ...). A program links only the providers it names.
type Provider struct {
	// Name is the provider's name, as Config.Provider and
	// SWITCHBOARD_PROVIDER spell it.
	Name string
	// Env reads the provider's settings through lookup; ok is false when
	// the environment does not configure it.
	Env func(lookup func(string) (string, bool)) (cfg Config, ok bool)
	// Hint says which environment variables configure it, for the error
	// FromEnv returns when none is configured.
	Hint string
	// New returns the provider's model for cfg.
	New func(cfg Config) (llm.Model, error)
	// EmbedderEnv, EmbedderHint and NewEmbedder are the same for the
	// provider's embedder ([EmbedderFromEnv]); nil when it has none.
	EmbedderEnv  func(lookup func(string) (string, bool)) (cfg Config, ok bool)
	EmbedderHint string
	NewEmbedder  func(cfg Config) (llm.Embedder, error)
}

// FromEnv returns the model the environment configures, among providers;
// see [ConfigFromEnv].
//
//	model, err := provider.FromEnv(openai.Provider(), anthropic.Provider())
func FromEnv(providers ...Provider) (llm.Model, error) {
	cfg, err := ConfigFromEnv(os.LookupEnv, providers...)
	if err != nil {
		return nil, err
	}
	for _, p := range providers {
		if p.Name == cfg.Provider {
			return p.New(cfg)
		}
	}
	return nil, failure.New(failure.Internal, failure.SourceModel, "provider "+cfg.Provider+" configured but not offered")
}

// ConfigFromEnv reads a Config through lookup (os.LookupEnv, or a map's
// lookup in tests): SWITCHBOARD_PROVIDER names the provider when set;
// otherwise the first of providers that the environment configures is
// chosen. Each provider's package documents its variables (OPENAI_API_KEY,
// ANTHROPIC_API_KEY, ...).
//
// When no provider is configured it returns a *failure.Error of kind
// failure.Config saying how to configure one.
func ConfigFromEnv(lookup func(string) (string, bool), providers ...Provider) (Config, error) {
	if len(providers) == 0 {
		return Config{}, failure.New(failure.Config, failure.SourceModel,
			"no model provider is linked: pass the providers to choose from (provider.FromEnv(openai.Provider(), ...))")
	}
	return choose(lookup, envProvider, "provider", "model provider", providers,
		func(p Provider) (func(func(string) (string, bool)) (Config, bool), string) { return p.Env, p.Hint })
}

// choose is the Config of the provider the environment configures, by
// the rules of ConfigFromEnv: envVar names it, else the first configured;
// env gives a provider's reader (nil: it offers none) and hint; what and
// none word the errors.
func choose(lookup func(string) (string, bool), envVar, what, none string, providers []Provider,
	env func(Provider) (func(func(string) (string, bool)) (Config, bool), string)) (Config, error) {
	var names []string
	for _, p := range providers {
		if read, _ := env(p); read != nil {
			names = append(names, p.Name)
		}
	}
	v, _ := lookup(envVar)
	if want := strings.ToLower(strings.TrimSpace(v)); want != "" {
		for _, p := range providers {
			read, hint := env(p)
			if p.Name != want || read == nil {
				continue
			}
			cfg, ok := read(lookup)
			if !ok {
				return Config{}, failure.New(failure.Config, failure.SourceModel,
					fmt.Sprintf("%s=%s but the provider is not configured: %s", envVar, want, hint))
			}
			cfg.Provider = p.Name
			return cfg, nil
		}
		return Config{}, failure.New(failure.Config, failure.SourceModel,
			fmt.Sprintf("%s=%q is not a %s: use one of %s", envVar, want, what, strings.Join(names, ", ")))
	}
	hints := make([]string, 0, len(providers))
	for _, p := range providers {
		read, hint := env(p)
		if read == nil {
			continue
		}
		if cfg, ok := read(lookup); ok {
			cfg.Provider = p.Name
			return cfg, nil
		}
		hints = append(hints, hint)
	}
	return Config{}, failure.New(failure.Config, failure.SourceModel,
		"no "+none+" is configured: "+strings.Join(hints, "; ")+
			"; "+envVar+"="+strings.Join(names, "|")+" chooses when several are set")
}

// Lookup returns the trimmed value of an environment variable through
// lookup ("" when unset): a helper for a Provider's Env.
func Lookup(lookup func(string) (string, bool), key string) string {
	v, _ := lookup(key)
	return strings.TrimSpace(v)
}
