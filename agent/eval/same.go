package eval

import (
	"bytes"
	"encoding/json"
	"regexp"

	"github.com/switchboard-dev/switchboard/internal/redact"
	"github.com/switchboard-dev/switchboard/llm"
)

// sameRequest is the fast check of a replayed request: whether it equals
// the recorded one field by field (text as it is or redacted, JSON by its
// compact form, call ids left out). Only a request that fails it is
// flattened to find and show the first difference.
func sameRequest(rec *Request, req *llm.Request, ignore []*regexp.Regexp) bool {
	sameText := func(rec, live string) bool { return sameTextMasked(rec, live, ignore) }
	if !sameText(rec.System, req.System) || rec.Compaction != req.Compaction ||
		len(rec.Tools) != len(req.Tools) || len(rec.Messages) != len(req.Messages) {
		return false
	}
	if (rec.Output == nil) != (req.Output == nil) ||
		rec.Output != nil && (rec.Output.Name != req.Output.Name || rec.Output.Description != req.Output.Description ||
			!sameJSON(rec.Output.Schema, req.Output.Schema)) {
		return false
	}
	for i := range rec.Tools {
		a, b := &rec.Tools[i], &req.Tools[i]
		if a.Name != b.Name || a.Description != b.Description || a.Deferred != b.Deferred || !sameJSON(a.Schema, b.Schema) {
			return false
		}
	}
	for i := range rec.Messages {
		if !sameMessage(&rec.Messages[i], &req.Messages[i], ignore) {
			return false
		}
	}
	return true
}

func sameMessage(a, b *llm.Message, ignore []*regexp.Regexp) bool {
	sameText := func(rec, live string) bool { return sameTextMasked(rec, live, ignore) }
	if a.Role != b.Role || !sameText(a.Text, b.Text) || !sameText(a.Reasoning, b.Reasoning) ||
		len(a.Parts) != len(b.Parts) || len(a.ToolCalls) != len(b.ToolCalls) || len(a.ToolResults) != len(b.ToolResults) ||
		!bytes.Equal(a.Provider, b.Provider) && !sameJSON(a.Provider, b.Provider) {
		return false
	}
	for i := range a.Parts {
		if !samePart(&a.Parts[i], &b.Parts[i], ignore) {
			return false
		}
	}
	for i := range a.ToolCalls {
		x, y := &a.ToolCalls[i], &b.ToolCalls[i]
		if x.Name != y.Name || !sameJSON(x.Args, y.Args) && string(x.Args) != redact.Secrets(string(y.Args)) {
			return false
		}
	}
	for i := range a.ToolResults {
		x, y := &a.ToolResults[i], &b.ToolResults[i]
		if x.Name != y.Name || x.IsError != y.IsError || !sameText(x.Content, y.Content) || len(x.Parts) != len(y.Parts) {
			return false
		}
		for j := range x.Parts {
			if !samePart(&x.Parts[j], &y.Parts[j], ignore) {
				return false
			}
		}
	}
	return true
}

func samePart(a, b *llm.Part, ignore []*regexp.Regexp) bool {
	return a.Kind == b.Kind && sameTextMasked(a.Text, b.Text, ignore) && a.MediaType == b.MediaType &&
		bytes.Equal(a.Data, b.Data) && a.URL == b.URL && a.Name == b.Name
}

// sameTextMasked: recorded text rec is live text as it is, or redacted,
// or the same once what ignore matches is masked.
func sameTextMasked(rec, live string, ignore []*regexp.Regexp) bool {
	if rec == live {
		return true
	}
	red := redact.Secrets(live)
	return rec == red || len(ignore) > 0 && mask(ignore, rec) == mask(ignore, red)
}

func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return false
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}
