package server_test

// The reference features of the MCP conformance suite, served by our
// package: the tools are Switchboard agent.Tools (they report progress and
// ask questions through agent.CallFromContext, sample through
// Server.Sampler), test_simple_prompt is a skill (testdata/skills) offered
// as a prompt, and the rest (logging, resources, the other prompts,
// completion) is added to Server.MCP as go-sdk features. Content, names and
// texts follow go-sdk's conformance/everything-server (Copyright 2025 The
// Go MCP SDK Authors, MIT licence), which mirrors the suite's TypeScript
// reference server.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/mcp/server"
	"github.com/switchboard-dev/switchboard/skills"
)

const (
	testImageBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	testAudioBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

func imageData() []byte { b, _ := base64.StdEncoding.DecodeString(testImageBase64); return b }
func audioData() []byte { b, _ := base64.StdEncoding.DecodeString(testAudioBase64); return b }

// tool is an agent tool with an object schema.
func tool(name, desc, schema string, fn func(ctx context.Context, args json.RawMessage) (*agent.Result, error)) agent.Tool {
	if schema == "" {
		schema = `{"type":"object"}`
	}
	return agent.NewFuncTool(agent.ToolSpec{Name: name, Description: desc, InputSchema: json.RawMessage(schema), ReadOnly: true}, fn)
}

func text(s string) agent.Part { return agent.Part{Type: agent.PartText, Text: s} }

// referenceTools are the conformance suite's tools as agent tools; srv is
// filled in once the server exists (for its Sampler).
func referenceTools(srv **server.Server) []agent.Tool {
	elicit := func(message string, schema string) func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
		return func(ctx context.Context, args json.RawMessage) (*agent.Result, error) {
			if message == "" {
				var in struct {
					Message string `json:"message"`
				}
				_ = json.Unmarshal(args, &in)
				message = in.Message
			}
			call, ok := agent.CallFromContext(ctx)
			if !ok {
				return nil, errors.New("no call context")
			}
			res, err := call.Elicit(ctx, agent.Elicitation{Kind: agent.ElicitForm, Message: message, Schema: json.RawMessage(schema)})
			if err != nil {
				return nil, err
			}
			return agent.TextResult(fmt.Sprintf("Elicitation result: action=%s, content=%v", res.Action, res.Content)), nil
		}
	}
	return []agent.Tool{
		tool("test_simple_text", "Tests simple text content response", "", func(context.Context, json.RawMessage) (*agent.Result, error) {
			return agent.TextResult("This is a simple text response for testing."), nil
		}),
		tool("test_image_content", "Tests image content response", "", func(context.Context, json.RawMessage) (*agent.Result, error) {
			return &agent.Result{Parts: []agent.Part{{Type: agent.PartImage, MIMEType: "image/png", Data: imageData()}}}, nil
		}),
		tool("test_audio_content", "Tests audio content response", "", func(context.Context, json.RawMessage) (*agent.Result, error) {
			return &agent.Result{Parts: []agent.Part{{Type: agent.PartAudio, MIMEType: "audio/wav", Data: audioData()}}}, nil
		}),
		tool("test_embedded_resource", "Tests embedded resource content response", "", func(context.Context, json.RawMessage) (*agent.Result, error) {
			return &agent.Result{Parts: []agent.Part{{Type: agent.PartResource, URI: "test://embedded-resource",
				MIMEType: "text/plain", Text: "This is an embedded resource"}}}, nil
		}),
		tool("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)", "", func(context.Context, json.RawMessage) (*agent.Result, error) {
			return &agent.Result{Parts: []agent.Part{text("This is text content"),
				{Type: agent.PartImage, MIMEType: "image/png", Data: imageData()},
				{Type: agent.PartResource, URI: "test://embedded-in-multiple", MIMEType: "text/plain", Text: "This is an embedded resource"}}}, nil
		}),
		tool("test_tool_with_progress", "Tests tool that reports progress notifications", "", func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			call, _ := agent.CallFromContext(ctx)
			for _, p := range []float64{0, 50, 100} {
				call.ReportProgress(agent.Progress{Progress: p, Total: 100, Message: fmt.Sprintf("Completed step %.0f of 100", p)})
				time.Sleep(50 * time.Millisecond)
			}
			return agent.TextResult("progress reported"), nil
		}),
		tool("test_error_handling", "Tests error response handling", "", func(context.Context, json.RawMessage) (*agent.Result, error) {
			return agent.ErrorResult("this tool intentionally returns an error for testing"), nil
		}),
		tool("test_sampling", "Tests server-initiated sampling (LLM completion request)",
			`{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}`,
			func(ctx context.Context, args json.RawMessage) (*agent.Result, error) {
				var in struct {
					Prompt string `json:"prompt"`
				}
				_ = json.Unmarshal(args, &in)
				res, err := (*srv).Sampler().Sample(ctx, agent.SamplingRequest{MaxTokens: 100,
					Messages: []llm.Message{{Role: llm.RoleUser, Text: in.Prompt}}})
				if err != nil {
					return nil, err
				}
				return agent.TextResult("LLM response: " + res.Text), nil
			}),
		tool("test_elicitation", "Tests server-initiated elicitation (user input request)",
			`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`,
			elicit("", `{"type":"object","properties":{"username":{"type":"string","description":"Your preferred username"}},"required":["username"]}`)),
		tool("test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034", "",
			elicit("Test defaults for primitives", `{"type":"object","properties":{
				"name":{"type":"string","description":"User name","default":"John Doe"},
				"age":{"type":"integer","description":"User age","default":30},
				"score":{"type":"number","description":"User score","default":95.5},
				"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
				"verified":{"type":"boolean","description":"Verification status","default":true}}}`)),
		tool("test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330", "",
			elicit("Test enum schemas", `{"type":"object","properties":{
				"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},
				"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
				"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
				"untitledMulti":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},
				"titledMulti":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"string","anyOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]}}}}`)),
		tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)", `{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
			"properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
				"contactMethod": {"type": "string", "enum": ["phone", "email"]}, "phone": {"type": "string"}, "email": {"type": "string"}},
			"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
			"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
			"then": {"required": ["phone"]},
			"else": {"required": ["email"]},
			"additionalProperties": false}`,
			func(_ context.Context, args json.RawMessage) (*agent.Result, error) {
				return agent.TextResult(fmt.Sprintf("JSON Schema 2020-12 tool called with: %s", args)), nil
			}),
	}
}

// newReferenceServer is our server offering the suite's reference
// features (see the file comment).
func newReferenceServer(t testing.TB) *server.Server {
	t.Helper()
	ctx := context.Background()
	sk, err := skills.New(ctx, skills.Config{Roots: []skills.Root{{Path: filepath.Join("testdata", "skills")}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sk.Close() })
	var srv *server.Server
	srv, err = server.New(ctx, server.Config{Name: "switchboard-conformance", Version: "1.0.0",
		Toolsets:    []agent.Toolset{agent.NewToolset("reference", referenceTools(&srv)...)},
		Skills:      sk,
		Permissions: agent.AllowAll(),
		MCPOptions: &gomcp.ServerOptions{
			CompletionHandler: func(context.Context, *gomcp.CompleteRequest) (*gomcp.CompleteResult, error) {
				return &gomcp.CompleteResult{Completion: gomcp.CompletionResultDetails{Values: []string{}}}, nil
			},
			SubscribeHandler:   func(context.Context, *gomcp.SubscribeRequest) error { return nil },
			UnsubscribeHandler: func(context.Context, *gomcp.UnsubscribeRequest) error { return nil },
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	addReferenceFeatures(srv.MCP())
	return srv
}

// addReferenceFeatures adds the go-sdk features of the reference server.
func addReferenceFeatures(s *gomcp.Server) {
	gomcp.AddTool(s, &gomcp.Tool{Name: "test_tool_with_logging", Description: "Tests tool that emits log messages during execution"},
		func(ctx context.Context, req *gomcp.CallToolRequest, _ any) (*gomcp.CallToolResult, any, error) {
			for _, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				_ = req.Session.Log(ctx, &gomcp.LoggingMessageParams{Level: "info", Data: m})
				time.Sleep(20 * time.Millisecond)
			}
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "Tool with logging executed successfully"}}}, nil, nil
		})
	res := func(uri, mime, text string, blob []byte) gomcp.ResourceHandler {
		return func(_ context.Context, req *gomcp.ReadResourceRequest) (*gomcp.ReadResourceResult, error) {
			return &gomcp.ReadResourceResult{Contents: []*gomcp.ResourceContents{{URI: req.Params.URI, MIMEType: mime, Text: text, Blob: blob}}}, nil
		}
	}
	s.AddResource(&gomcp.Resource{Name: "static-text", Description: "A static text resource for testing", MIMEType: "text/plain",
		URI: "test://static-text"}, res("", "text/plain", "This is the content of the static text resource.", nil))
	s.AddResource(&gomcp.Resource{Name: "static-binary", Description: "A static binary resource (image) for testing", MIMEType: "image/png",
		URI: "test://static-binary"}, res("", "image/png", "", imageData()))
	s.AddResource(&gomcp.Resource{Name: "watched-resource", Description: "A resource that auto-updates", MIMEType: "text/plain",
		URI: "test://watched-resource"}, res("", "text/plain", "Watched resource content", nil))
	s.AddResourceTemplate(&gomcp.ResourceTemplate{Name: "template", Description: "A resource template with parameter substitution",
		MIMEType: "application/json", URITemplate: "test://template/{id}/data"},
		func(_ context.Context, req *gomcp.ReadResourceRequest) (*gomcp.ReadResourceResult, error) {
			var id string
			fmt.Sscanf(req.Params.URI, "test://template/%s", &id)
			if i := len(id) - len("/data"); i > 0 {
				id = id[:i]
			}
			return &gomcp.ReadResourceResult{Contents: []*gomcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json",
				Text: fmt.Sprintf(`{"id": "%s", "templateTest": true, "data": "Data for ID: %s"}`, id, id)}}}, nil
		})
	s.AddPrompt(&gomcp.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt With Arguments", Description: "A prompt with required arguments",
		Arguments: []*gomcp.PromptArgument{{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true}}},
		func(_ context.Context, req *gomcp.GetPromptRequest) (*gomcp.GetPromptResult, error) {
			return &gomcp.GetPromptResult{Description: "A prompt with arguments", Messages: []*gomcp.PromptMessage{{Role: "user",
				Content: &gomcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'",
					req.Params.Arguments["arg1"], req.Params.Arguments["arg2"])}}}}, nil
		})
	s.AddPrompt(&gomcp.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource",
		Description: "A prompt that includes an embedded resource",
		Arguments:   []*gomcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ context.Context, req *gomcp.GetPromptRequest) (*gomcp.GetPromptResult, error) {
			return &gomcp.GetPromptResult{Description: "A prompt with an embedded resource", Messages: []*gomcp.PromptMessage{
				{Role: "user", Content: &gomcp.EmbeddedResource{Resource: &gomcp.ResourceContents{URI: req.Params.Arguments["resourceUri"],
					MIMEType: "text/plain", Text: "Embedded resource content for testing."}}},
				{Role: "user", Content: &gomcp.TextContent{Text: "Please process the embedded resource above."}}}}, nil
		})
	s.AddPrompt(&gomcp.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt that includes image content"},
		func(context.Context, *gomcp.GetPromptRequest) (*gomcp.GetPromptResult, error) {
			return &gomcp.GetPromptResult{Description: "A prompt with an image", Messages: []*gomcp.PromptMessage{
				{Role: "user", Content: &gomcp.ImageContent{Data: imageData(), MIMEType: "image/png"}},
				{Role: "user", Content: &gomcp.TextContent{Text: "Please analyze the image above."}}}}, nil
		})
}
