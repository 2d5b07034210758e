package agent_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
)

// openAIModel is the OpenAI provider's model against the server at url
// (BenchmarkTypedAnswer's "http" model).
func openAIModel(b *testing.B, url string) llm.Model {
	m, err := provider.New(provider.Config{Provider: "openai", APIKey: "test-key", BaseURL: url})
	if err != nil {
		b.Fatal(err)
	}
	return m
}
