// Package provider gives an [llm.Model] for hosted model APIs: OpenAI's
// chat completions (through langchaingo; also any OpenAI-compatible
// server: Ollama, vLLM, Gemini's OpenAI endpoint) and Anthropic's
// Messages API.
//
//	model, err := provider.FromEnv() // OPENAI_API_KEY, ANTHROPIC_API_KEY, ...
//	if err != nil {
//		return err // a *failure.Error of kind failure.Config saying what to set
//	}
//	a, err := agent.New(ctx, agent.Config{Model: model})
//
// or, configured in code:
//
//	model, err := provider.New(provider.Config{Provider: "anthropic", APIKey: key})
//
// # Guarantees
//
//   - Every failure is a [*failure.Error] of [failure.SourceModel]: 429 and
//     5xx (Anthropic's 529 too) are Transient and retryable, 401 and 403
//     PermissionDenied, 408 Timeout, any other 4xx Model (the provider
//     refused the request); errors.Is still finds context.Canceled and
//     context.DeadlineExceeded.
//   - The API key is never written to an error, a log line or a name.
//   - Calls are bounded by their context; the provider adds no timeout of
//     its own and no retry (an [agent.Agent] runs each call under its
//     failure policy).
package provider
