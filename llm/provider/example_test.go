package provider_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/anthropic"
	"github.com/switchboard-dev/switchboard/llm/provider/ollama"
	"github.com/switchboard-dev/switchboard/llm/provider/openai"
)

// ConfigFromEnv picks the provider from the environment; FromEnv is the
// same over os.LookupEnv. With nothing set, the error says what to set.
func ExampleConfigFromEnv() {
	env := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-example", "ANTHROPIC_MODEL": "claude-haiku-4-5"}
	cfg, err := provider.ConfigFromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		openai.Provider(), anthropic.Provider())
	fmt.Println(cfg.Provider, cfg.Model, err)

	_, err = provider.ConfigFromEnv(func(string) (string, bool) { return "", false }, openai.Provider(), anthropic.Provider())
	fmt.Println(err != nil)
	// Output:
	// anthropic claude-haiku-4-5 <nil>
	// true
}

// FromEnv falls back to nothing by itself: a program that can run offline
// uses the scripted model when no provider is configured.
func ExampleFromEnv() {
	model, err := provider.FromEnv(openai.Provider(), anthropic.Provider())
	if err != nil {
		model = llm.NewScripted(llm.Say("no provider configured; answering offline"))
	}
	_ = model
}

// EmbedderConfigFromEnv picks the embedder's provider apart from the chat
// model's (SWITCHBOARD_EMBEDDER, else the first configured), with the
// embedding model's own variable; EmbedderFromEnv is the same over
// os.LookupEnv and returns the embedder (for agent.Config.Embedder).
func ExampleEmbedderConfigFromEnv() {
	env := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-example", "OLLAMA_EMBEDDING_MODEL": "nomic-embed-text"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	chat, _ := provider.ConfigFromEnv(lookup, anthropic.Provider(), ollama.Provider())
	emb, err := provider.EmbedderConfigFromEnv(lookup, anthropic.Provider(), ollama.Provider())
	fmt.Println(chat.Provider, emb.Provider, emb.Model, err)
	// Output: anthropic ollama nomic-embed-text <nil>
}

// An OpenAI-compatible server (here a local stand-in for Ollama) answers
// through the langchaingo-based adapter.
func Example_openAICompatible() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"",
			"tool_calls":[{"id":"call_1","type":"function","function":{"name":"add","arguments":"{\"a\":2,\"b\":3}"}}]},
			"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":20,"completion_tokens":7}}`)
	}))
	defer srv.Close()

	model, err := openai.New(provider.Config{BaseURL: srv.URL + "/v1", Model: "llama3.2", HTTPClient: srv.Client()})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := model.Generate(context.Background(), &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Text: "2+3?"}},
		Tools:    []llm.ToolDef{{Name: "add", Description: "Adds two numbers."}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := resp.Message.ToolCalls[0]
	fmt.Println(model.Name(), c.Name, string(c.Args), resp.Usage.Total())
	// Output: openai/llama3.2 add {"a":2,"b":3} 27
}
