package a2a

import (
	"encoding/json"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// chunker streams the model's text into the task's "answer" artifact as
// it is produced: deltas are gathered until min bytes, then sent as a
// chunk (append). A model turn that ends in tool calls was not the answer:
// the next turn's first chunk replaces the artifact (append false). The
// last delta is held back until the run ends, so that the final chunk can
// carry lastChunk.
type chunker struct {
	ec  *a2asrv.ExecutorContext
	id  a2ago.ArtifactID
	min int // 0: defaultChunkBytes; negative: no streaming

	held    string // not yet sent
	sent    bool   // a chunk of this turn was sent
	anySent bool   // a chunk of any turn was sent
}

// defaultChunkBytes is the default ServerConfig.ChunkBytes.
const defaultChunkBytes = 256

func (c *chunker) turn() {
	c.held, c.sent = "", false
}

func (c *chunker) event(text string, last bool) *a2ago.TaskArtifactUpdateEvent {
	ev := a2ago.NewArtifactUpdateEvent(c.ec, c.id, a2ago.NewTextPart(text))
	ev.Append = c.sent
	ev.LastChunk = last
	ev.Artifact.Name = "answer"
	c.sent, c.anySent = true, true
	return ev
}

// text takes a delta and returns a chunk to send, if one is due.
func (c *chunker) text(delta string) *a2ago.TaskArtifactUpdateEvent {
	if c.min < 0 || delta == "" {
		return nil
	}
	min := c.min
	if min == 0 {
		min = defaultChunkBytes
	}
	c.held += delta
	if len(c.held) < min {
		return nil
	}
	// Keep the last delta back: it goes out with lastChunk if the turn is
	// the answer.
	out := c.held[:len(c.held)-len(delta)]
	if out == "" {
		return nil
	}
	c.held = delta
	return c.event(out, false)
}

// final returns the last chunk of the answer: what is held back, or the
// whole answer when nothing of this turn was streamed.
func (c *chunker) final(answer string) *a2ago.TaskArtifactUpdateEvent {
	if c.sent && c.held != "" {
		return c.event(c.held, true)
	}
	c.sent = false // replace whatever an earlier turn streamed
	return c.event(answer, true)
}

// withData adds a typed answer (agent.Answer.Data) to the answer's last
// chunk as a data part (media type application/json) after its text, so
// that the "answer" artifact holds the text and the value. A value that
// does not decode is left out (the run validated it).
func withData(ev *a2ago.TaskArtifactUpdateEvent, data json.RawMessage) {
	if len(data) == 0 || ev.Artifact == nil {
		return
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return
	}
	p := a2ago.NewDataPart(v)
	p.MediaType = "application/json"
	ev.Artifact.Parts = append(ev.Artifact.Parts, p)
}
