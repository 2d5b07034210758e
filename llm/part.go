package llm

import (
	"fmt"
	"strings"
)

// PartKind is the kind of a [Part].
type PartKind string

// Part kinds.
const (
	// PartText is text (Part.Text).
	PartText PartKind = "text"
	// PartImage is an image: image/png, image/jpeg, image/gif, image/webp.
	PartImage PartKind = "image"
	// PartAudio is audio: audio/wav, audio/mpeg, ...
	PartAudio PartKind = "audio"
	// PartDocument is a document the model reads: application/pdf, or a
	// text file (text/plain, text/markdown, text/csv, ...).
	PartDocument PartKind = "document"
)

// Part is one piece of a message's or a tool result's content beyond its
// text: text, an image, audio or a document. A media part has either Data
// (the bytes) or URL (where the provider fetches it), and MediaType.
type Part struct {
	Kind PartKind `json:"kind"`
	// Text is a text part's text.
	Text string `json:"text,omitempty"`
	// MediaType is a media part's IANA media type, e.g. "image/png".
	MediaType string `json:"media_type,omitempty"`
	// Data is a media part's content (base64 in JSON).
	Data []byte `json:"data,omitempty"`
	// URL is where a media part's content is, for providers that fetch it
	// (https: or gs: and the like); a data: URL is decoded into Data by
	// whoever builds the part.
	URL string `json:"url,omitempty"`
	// Name is a file's name, when it has one (documents, A2A file parts).
	Name string `json:"name,omitempty"`
}

// TextPart returns a text part.
func TextPart(text string) Part { return Part{Kind: PartText, Text: text} }

// ImagePart returns an image part of data, of media type mediaType.
func ImagePart(mediaType string, data []byte) Part {
	return Part{Kind: PartImage, MediaType: mediaType, Data: data}
}

// DocumentPart returns a document part (a PDF, a text file) named name.
func DocumentPart(name, mediaType string, data []byte) Part {
	return Part{Kind: PartDocument, Name: name, MediaType: mediaType, Data: data}
}

// KindOfMediaType is the part kind of a media type: image/* is PartImage,
// audio/* PartAudio, and any other PartDocument.
func KindOfMediaType(mediaType string) PartKind {
	mt := strings.ToLower(strings.TrimSpace(mediaType))
	switch {
	case strings.HasPrefix(mt, "image/"):
		return PartImage
	case strings.HasPrefix(mt, "audio/"):
		return PartAudio
	}
	return PartDocument
}

// Describe is a one-line text stand-in for p, for a model that does not
// accept its kind: "[image image/png, 48213 bytes]".
func (p Part) Describe() string {
	if p.Kind == PartText {
		return p.Text
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[%s", p.Kind)
	if p.Name != "" {
		fmt.Fprintf(&b, " %q", p.Name)
	}
	if p.MediaType != "" {
		b.WriteString(" " + p.MediaType)
	}
	switch {
	case len(p.Data) > 0:
		fmt.Fprintf(&b, ", %d bytes", len(p.Data))
	case p.URL != "":
		b.WriteString(" at " + p.URL)
	}
	b.WriteString("]")
	return b.String()
}
