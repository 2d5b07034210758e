package bedrock_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/bedrock"
)

// A Bedrock model with an API key, asked for a typed answer. A local
// server stands in for https://bedrock-runtime.us-east-1.amazonaws.com.
func ExampleNew() {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"output":{"message":{"role":"assistant","content":[
			{"toolUse":{"toolUseId":"tooluse_1","name":"answer","input":{"city":"Paris","celsius":18}}}]}},
			"stopReason":"tool_use","usage":{"inputTokens":120,"outputTokens":25,"totalTokens":145},"metrics":{"latencyMs":300}}`)
	}))
	defer srv.Close()

	model, err := bedrock.New(provider.Config{Region: "us-east-1", APIKey: "bedrock-api-key",
		BaseURL: srv.URL, HTTPClient: srv.Client()}) // drop BaseURL and HTTPClient to reach AWS
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := model.Generate(context.Background(), &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Text: "Weather in Paris?"}},
		Output:   &llm.Output{Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"celsius":{"type":"number"}}}`)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(model.Name())
	fmt.Println(resp.Message.Text)
	fmt.Println(resp.Usage.InputTokens, resp.Usage.OutputTokens)
	// Output:
	// bedrock/global.anthropic.claude-sonnet-4-5-20250929-v1:0
	// {"celsius":18,"city":"Paris"}
	// 120 25
}

// Bedrock chosen from the environment among other providers; here the
// environment is a map.
func ExampleProvider() {
	env := map[string]string{"AWS_BEARER_TOKEN_BEDROCK": "bedrock-api-key", "AWS_REGION": "eu-west-1",
		"BEDROCK_MODEL": "eu.amazon.nova-pro-v1:0"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg, err := provider.ConfigFromEnv(lookup, bedrock.Provider())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Provider, cfg.Region, cfg.Model)
	model, err := bedrock.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	caps := llm.CapabilitiesOf(model)
	fmt.Println(model.Name(), caps.PromptCache, caps.Accept(llm.PartImage))
	// Output:
	// bedrock eu-west-1 eu.amazon.nova-pro-v1:0
	// bedrock/eu.amazon.nova-pro-v1:0 true true
}

// A Bedrock model over an AWS configuration the program already has: its
// region and credentials (here static ones) sign every request.
func ExampleNewFromConfig() {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		signed := strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"output":{"message":{"role":"assistant","content":[{"text":"signed: %v"}]}},
			"stopReason":"end_turn","usage":{"inputTokens":9,"outputTokens":3,"totalTokens":12},"metrics":{"latencyMs":80}}`, signed)
	}))
	defer srv.Close()

	awsCfg := aws.Config{Region: "us-west-2",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "example-secret", "")}
	model, err := bedrock.NewFromConfig(awsCfg, provider.Config{Model: "us.amazon.nova-lite-v1:0",
		BaseURL: srv.URL, HTTPClient: srv.Client()})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := model.Generate(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Message.Text)
	// Output:
	// signed: true
}
