// Package provider chooses a hosted model API from the environment and
// holds what every provider shares: its [Config] and the [Provider] value
// each provider's package offers. The providers live in packages of their
// own, so that a program links only the ones it names:
// [github.com/switchboard-dev/switchboard/llm/provider/openai] (OpenAI's
// chat completions, and any OpenAI-compatible server),
// [github.com/switchboard-dev/switchboard/llm/provider/anthropic]
// (Anthropic's Messages API),
// [github.com/switchboard-dev/switchboard/llm/provider/gemini] (Google's
// Gemini API) and [github.com/switchboard-dev/switchboard/llm/provider/ollama]
// (a local Ollama server's own API).
//
//	model, err := provider.FromEnv(openai.Provider(), anthropic.Provider(), gemini.Provider(), ollama.Provider()) // OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, OLLAMA_MODEL, ...
//	if err != nil {
//		return err // a *failure.Error of kind failure.Config saying what to set
//	}
//	a, err := agent.New(ctx, agent.Config{Model: model})
//
// [EmbedderFromEnv] chooses an embedder the same way, among the providers
// that have one (OpenAI, Ollama, Gemini): SWITCHBOARD_EMBEDDER names it, and
// OPENAI_EMBEDDING_MODEL, OLLAMA_EMBEDDING_MODEL or GEMINI_EMBEDDING_MODEL its
// model:
//
//	emb, err := provider.EmbedderFromEnv(openai.Provider(), ollama.Provider(), gemini.Provider())
//	a, err := agent.New(ctx, agent.Config{Model: model, Embedder: emb})
//
// or, configured in code:
//
//	model, err := anthropic.New(provider.Config{APIKey: key})
//
// # Guarantees
//
// Every provider:
//
//   - reports every failure as a [*failure.Error] of [failure.SourceModel]:
//     429 and 5xx (Anthropic's 529 too) are Transient and retryable, 401 and
//     403 PermissionDenied, 408 Timeout, any other 4xx Model (the provider
//     refused the request); errors.Is still finds context.Canceled and
//     context.DeadlineExceeded;
//   - never writes the API key to an error, a log line or a name;
//   - is bounded by the call's context, adding no timeout of its own, and
//     runs each call under Config.Policy (nil: [failure.Default]).
package provider
