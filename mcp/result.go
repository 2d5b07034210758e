package mcp

import (
	"encoding/json"
	"fmt"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
)

// convertContent maps MCP content to result parts.
func convertContent(cs []gomcp.Content) []agent.Part {
	parts := make([]agent.Part, 0, len(cs))
	for _, c := range cs {
		parts = append(parts, convertOne(c))
	}
	return parts
}

func convertOne(c gomcp.Content) agent.Part {
	switch v := c.(type) {
	case *gomcp.TextContent:
		return agent.Part{Type: agent.PartText, Text: v.Text}
	case *gomcp.ImageContent:
		return agent.Part{Type: agent.PartImage, MIMEType: v.MIMEType, Data: v.Data}
	case *gomcp.AudioContent:
		return agent.Part{Type: agent.PartAudio, MIMEType: v.MIMEType, Data: v.Data}
	case *gomcp.ResourceLink:
		name := v.Name
		if v.Title != "" {
			name = v.Title
		}
		return agent.Part{Type: agent.PartResourceLink, URI: v.URI, Name: name, MIMEType: v.MIMEType, Text: v.Description}
	case *gomcp.EmbeddedResource:
		if v.Resource == nil {
			return agent.Part{Type: agent.PartText, Text: "[empty embedded resource]"}
		}
		return resourcePart(v.Resource)
	default:
		b, err := json.Marshal(c)
		if err != nil {
			return agent.Part{Type: agent.PartText, Text: fmt.Sprintf("[unsupported content %T]", c)}
		}
		return agent.Part{Type: agent.PartJSON, JSON: b}
	}
}

func resourcePart(r *gomcp.ResourceContents) agent.Part {
	p := agent.Part{Type: agent.PartResource, URI: r.URI, MIMEType: r.MIMEType, Text: r.Text}
	if r.Text == "" && r.Blob != nil {
		p.Data = r.Blob
	}
	return p
}

// resultBytes estimates what a result costs the model: the length of its
// text plus its binary data.
func resultBytes(r *agent.Result) int {
	n := 0
	for _, p := range r.Parts {
		n += len(p.Text) + len(p.JSON) + len(p.Data)
	}
	return n
}
