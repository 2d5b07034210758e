package agent

import (
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/agent/internal/tokens"
	"github.com/switchboard-dev/switchboard/llm"
)

// Parts: media (images, audio, documents) reach the model as llm.Part
// values, in the run's first user message (Input.Parts) and in tool results
// (Result parts of type image, audio, blob resource, or a resource link to an
// https URL of a media type), when the model accepts their kind
// (llm.Capabilities.Accept) and each is at most the run's part limit. Any
// other part reaches the model as text describing it: tool results through
// Result.Text, and every message through fitParts, the one place before a
// request is sent.

// defaultMaxPartBytes is Config.MaxPartBytes's default: 4 MiB (about 5.6 MB
// once base64-encoded), so that one part fits a stored session record of the
// default 8 MiB; a provider whose inline limit is lower says so in its
// llm.Capabilities.MaxPartBytes.
const defaultMaxPartBytes = 4 << 20

// eventDataMax is the most data one part may carry in an event; a larger
// part's data is left out of the event (Event.Result, Event.Parts).
const eventDataMax = 16 << 10

// partRule decides which parts a model takes as parts: those of a kind it
// accepts, of at most max bytes.
type partRule struct {
	caps llm.Capabilities
	max  int64
}

// partRule is the rule of the agent's model.
func (a *Agent) partRule() partRule {
	caps := llm.CapabilitiesOf(a.cfg.Model)
	max := a.cfg.MaxPartBytes
	if max == 0 {
		max = defaultMaxPartBytes
	}
	if caps.MaxPartBytes > 0 && (max < 0 || caps.MaxPartBytes < max) {
		max = caps.MaxPartBytes
	}
	return partRule{caps: caps, max: max}
}

// accepts reports whether a part of kind k and size bytes goes to the model
// as a part.
func (pr partRule) accepts(k llm.PartKind, size int) bool {
	if k == llm.PartText {
		return true
	}
	return pr.caps.Accept(k) && (pr.max < 0 || int64(size) <= pr.max)
}

// Accepts reports whether a part of kind k and size bytes, returned by the
// call's tool in its [Result], reaches the run's model as a part (an image
// the model sees) rather than as text describing it: the model accepts
// the kind ([llm.Capabilities.Accept]) and the part is within the agent's
// [Config.MaxPartBytes] and the model's [llm.Capabilities.MaxPartBytes]. A
// toolset that would otherwise save a large result elsewhere (package
// mcp's spill to files) keeps such parts in the result. It is false
// outside a run (a nil Call, a call bound with [BindCall]) except for text.
func (c *Call) Accepts(k llm.PartKind, size int) bool {
	if k == llm.PartText {
		return true
	}
	if c == nil || c.parts == nil {
		return false
	}
	return c.parts.accepts(k, size)
}

// ModelPart returns p as the model part it stands for, and whether it
// stands for one: an image or audio part with data, a blob resource (its
// kind from its MIME type), or a resource link to an https URL with a MIME
// type. Text, JSON, text resources and other links are read as text
// ([Result.Text]).
func (p Part) ModelPart() (llm.Part, bool) {
	switch p.Type {
	case PartImage, PartAudio, PartResource:
		if len(p.Data) == 0 || p.Type == PartResource && p.Text != "" {
			return llm.Part{}, false
		}
		kind := llm.PartImage
		switch p.Type {
		case PartAudio:
			kind = llm.PartAudio
		case PartResource:
			kind = llm.KindOfMediaType(p.MIMEType)
		}
		name := p.Name
		if name == "" && p.Type == PartResource {
			name = p.URI
		}
		return llm.Part{Kind: kind, MediaType: p.MIMEType, Data: p.Data, Name: name}, true
	case PartResourceLink:
		if p.MIMEType == "" || !strings.HasPrefix(strings.ToLower(p.URI), "https://") {
			return llm.Part{}, false
		}
		return llm.Part{Kind: llm.KindOfMediaType(p.MIMEType), MediaType: p.MIMEType, URL: p.URI, Name: p.Name}, true
	}
	return llm.Part{}, false
}

// split renders a result for the model: its text, in which each part that
// goes to the model as a part is a one-line note, and those parts, in
// order.
func (pr partRule) split(res *Result) (string, []llm.Part) {
	var media []llm.Part
	var rest []Part
	for _, p := range res.Parts {
		if mp, ok := p.ModelPart(); ok && pr.accepts(mp.Kind, len(mp.Data)) {
			media = append(media, mp)
			p = Part{Type: PartText, Text: fmt.Sprintf("%s (attached: part %d)", mp.Describe(), len(media))}
		}
		rest = append(rest, p)
	}
	if len(media) == 0 {
		return res.Text(), nil
	}
	return (&Result{Parts: rest}).Text(), media
}

// userMessage is the run's first message: its input and the media of its
// Input.
func (r *run) userMessage(input string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Text: input, Parts: r.in.Parts}
}

// fitParts returns msgs with every part the model does not take (of a kind
// it does not accept, or over the part limit) replaced by a text part
// describing it, so that no provider is sent a kind its model refuses. It
// copies only the messages it changes.
func (pr partRule) fitParts(msgs []llm.Message) []llm.Message {
	var out []llm.Message
	for i := range msgs {
		m, changed := pr.fitMessage(msgs[i])
		if changed && out == nil {
			out = make([]llm.Message, len(msgs))
			copy(out, msgs)
		}
		if out != nil {
			out[i] = m
		}
	}
	if out == nil {
		return msgs
	}
	return out
}

func (pr partRule) fitMessage(m llm.Message) (llm.Message, bool) {
	changed := false
	if ps, ok := pr.fit(m.Parts); ok {
		m.Parts, changed = ps, true
	}
	copied := false
	for j, tr := range m.ToolResults {
		ps, ok := pr.fit(tr.Parts)
		if !ok {
			continue
		}
		if !copied {
			m.ToolResults, copied = slices.Clone(m.ToolResults), true
		}
		m.ToolResults[j].Parts, changed = ps, true
	}
	return m, changed
}

// fit returns ps with the parts the model does not take described, and
// whether any was (ps itself is never changed).
func (pr partRule) fit(ps []llm.Part) ([]llm.Part, bool) {
	var out []llm.Part
	for i, p := range ps {
		if pr.accepts(p.Kind, len(p.Data)) {
			continue
		}
		if out == nil {
			out = make([]llm.Part, len(ps))
			copy(out, ps)
		}
		out[i] = llm.TextPart(describePart(p))
	}
	return out, out != nil
}

// describePart is the text that stands for a part the model does not take.
func describePart(p llm.Part) string {
	return p.Describe() + " (not shown: the model does not take this part)"
}

// eventParts returns ps as events carry them: data over eventDataMax left
// out (the part's Describe text says what it was).
func eventParts(ps []llm.Part) []llm.Part {
	if len(ps) == 0 {
		return nil
	}
	out := make([]llm.Part, len(ps))
	for i, p := range ps {
		if len(p.Data) > eventDataMax {
			p = llm.Part{Kind: p.Kind, MediaType: p.MediaType, URL: p.URL, Name: p.Name,
				Text: p.Describe() + " (data left out of the event)"}
		}
		out[i] = p
	}
	return out
}

// eventResult returns res as events carry it: data over eventDataMax left
// out of its parts (a text note says what it was). res itself is returned
// when nothing is left out.
func eventResult(res *Result) *Result {
	if res == nil {
		return nil
	}
	big := false
	for _, p := range res.Parts {
		big = big || len(p.Data) > eventDataMax
	}
	if !big {
		return res
	}
	cp := *res
	cp.Parts = make([]Part, len(res.Parts))
	for i, p := range res.Parts {
		if len(p.Data) > eventDataMax {
			p = Part{Type: PartText, Text: (&Result{Parts: []Part{p}}).Text() + " (data left out of the event)"}
		}
		cp.Parts[i] = p
	}
	return &cp
}

// partRule is the run's rule for media parts, made once per run (by
// newCtxRun, or on first use).
func (r *run) partRule() *partRule {
	if r.cx == nil || r.cx.parts == nil {
		pr := r.a.partRule()
		if r.cx == nil {
			return &pr
		}
		r.cx.parts = &pr
	}
	return r.cx.parts
}

// elides reports whether compaction elides an old tool result: a big one,
// or one with parts.
func elides(tr llm.ToolResult) bool { return len(tr.Content) > elideBytes || len(tr.Parts) > 0 }

// partsTokens estimates parts as the model is sent them: those it takes by
// its provider's rule (agent/internal/tokens), the others as the text that
// describes them.
func (cx *ctxRun) partsTokens(ps []llm.Part) int {
	n := 0
	for _, p := range ps {
		switch {
		case p.Kind == llm.PartText:
			n += tokens.Count(p.Text)
		case !cx.parts.accepts(p.Kind, len(p.Data)):
			n += tokens.Count(describePart(p))
		case p.Kind == llm.PartImage:
			n += tokens.Image(cx.media, p.Data)
		case p.Kind == llm.PartAudio:
			n += tokens.Audio(cx.media, p.Data)
		default:
			n += tokens.Document(cx.media, p.MediaType, p.Data)
		}
	}
	return n
}

// inputParts are the media of a checkpointed run's input: the parts of its
// first message, the user's.
func inputParts(cp *Checkpoint) []llm.Part {
	if len(cp.Messages) == 0 || cp.Messages[0].Role != llm.RoleUser {
		return nil
	}
	return cp.Messages[0].Parts
}
