package server

import (
	"bytes"
	"encoding/json"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
)

// toMCPResult maps an agent result to MCP content: text, images, audio,
// resource links and embedded resources as they are; a JSON part as text
// and, when it is the only JSON part and an object, as structuredContent.
func toMCPResult(r *agent.Result) *gomcp.CallToolResult {
	out := &gomcp.CallToolResult{Content: []gomcp.Content{}}
	if r == nil {
		return out
	}
	out.IsError = r.IsError
	var structured []json.RawMessage
	for _, p := range r.Parts {
		switch p.Type {
		case agent.PartText:
			out.Content = append(out.Content, &gomcp.TextContent{Text: p.Text})
		case agent.PartImage:
			out.Content = append(out.Content, &gomcp.ImageContent{Data: p.Data, MIMEType: p.MIMEType})
		case agent.PartAudio:
			out.Content = append(out.Content, &gomcp.AudioContent{Data: p.Data, MIMEType: p.MIMEType})
		case agent.PartResourceLink:
			out.Content = append(out.Content, &gomcp.ResourceLink{URI: p.URI, Name: p.Name, MIMEType: p.MIMEType})
		case agent.PartResource:
			rc := &gomcp.ResourceContents{URI: p.URI, MIMEType: p.MIMEType, Text: p.Text}
			if p.Text == "" && p.Data != nil {
				rc.Blob = p.Data
			}
			out.Content = append(out.Content, &gomcp.EmbeddedResource{Resource: rc})
		case agent.PartJSON:
			out.Content = append(out.Content, &gomcp.TextContent{Text: string(p.JSON)})
			structured = append(structured, p.JSON)
		default:
			out.Content = append(out.Content, &gomcp.TextContent{Text: (&agent.Result{Parts: []agent.Part{p}}).Text()})
		}
	}
	if len(structured) == 1 && isObject(structured[0]) {
		out.StructuredContent = structured[0] // the bytes as they came, not decoded
	}
	return out
}

// isObject reports whether raw is one JSON object, without decoding it.
func isObject(raw json.RawMessage) bool {
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(raw)
}
