package agent_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/openai"
)

// openAIModel is the OpenAI provider's model against the server at url
// (BenchmarkTypedAnswer's "http" model).
func openAIModel(b *testing.B, url string) llm.Model {
	m, err := openai.New(provider.Config{APIKey: "test-key", BaseURL: url})
	if err != nil {
		b.Fatal(err)
	}
	return m
}
