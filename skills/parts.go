package skills

import (
	"context"
	"fmt"
	"mime"
	"strings"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// filePart is the result of reading a whole binary bundled file (an image,
// audio, a PDF) as a part, when the calling run's model takes it as one
// (agent.Call.Accepts); nil otherwise (the file is then read as base64
// text, in pages).
func filePart(ctx context.Context, rel, mediaType string, data []byte, whole bool) *agent.Result {
	if !whole || mediaType == "application/octet-stream" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return nil
	}
	kind := llm.KindOfMediaType(mt)
	if kind == llm.PartDocument && mt != "application/pdf" {
		return nil // only PDFs among binary documents: others are read as base64
	}
	call, _ := agent.CallFromContext(ctx)
	if !call.Accepts(kind, len(data)) {
		return nil
	}
	p := agent.Part{Type: agent.PartResource, MIMEType: mt, Data: data, Name: rel, URI: rel}
	switch kind {
	case llm.PartImage:
		p.Type = agent.PartImage
	case llm.PartAudio:
		p.Type = agent.PartAudio
	}
	return &agent.Result{Parts: []agent.Part{
		{Type: agent.PartText, Text: fmt.Sprintf("[%s file %s (%s), all %d bytes, attached]", strings.ToLower(string(kind)), rel, mt, len(data))}, p}}
}
