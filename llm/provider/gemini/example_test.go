package gemini_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/gemini"
)

// New takes a key (and, here, the base URL of a local stand-in for the
// Gemini API); an answer reports its usage in the llm convention: output
// includes the thoughts Gemini counts apart.
func ExampleNew() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"Bonjour."}]},"finishReason":"STOP"}],
			"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":3,"thoughtsTokenCount":40,"cachedContentTokenCount":8}}`)
	}))
	defer api.Close()

	model, err := gemini.New(provider.Config{APIKey: "AIza-example", BaseURL: api.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := model.Generate(context.Background(), &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Text: "Say hello in French."}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(model.Name(), resp.Message.Text, resp.StopReason)
	fmt.Printf("%+v\n", resp.Usage)
	// Output:
	// gemini/gemini-2.5-flash Bonjour. STOP
	// {InputTokens:12 OutputTokens:43 CacheReadTokens:8 CacheWriteTokens:0 ReasoningTokens:40}
}
