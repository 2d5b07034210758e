package bedrock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithydocument "github.com/aws/smithy-go/document"

	"github.com/switchboard-dev/switchboard/llm"
)

// imageFormats are the image formats Converse takes, by media type.
var imageFormats = map[string]types.ImageFormat{
	"image/png": types.ImageFormatPng, "image/jpeg": types.ImageFormatJpeg, "image/jpg": types.ImageFormatJpeg,
	"image/gif": types.ImageFormatGif, "image/webp": types.ImageFormatWebp,
}

// documentFormats are the document formats Converse takes, by media type.
var documentFormats = map[string]types.DocumentFormat{
	"application/pdf":    types.DocumentFormatPdf,
	"text/csv":           types.DocumentFormatCsv,
	"application/msword": types.DocumentFormatDoc,
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document": types.DocumentFormatDocx,
	"application/vnd.ms-excel": types.DocumentFormatXls,
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": types.DocumentFormatXlsx,
	"text/html":     types.DocumentFormatHtml,
	"text/plain":    types.DocumentFormatTxt,
	"text/markdown": types.DocumentFormatMd,
}

// mediaType is mt without its parameters, in lower case.
func mediaType(mt string) string {
	if t, _, err := mime.ParseMediaType(mt); err == nil {
		return t
	}
	return strings.ToLower(strings.TrimSpace(mt))
}

// media is a part as Converse takes it: an image or a document of a known
// format, from bytes or an S3 location; ok is false for a part to describe
// in text instead.
type media struct {
	image    *types.ImageBlock
	document *types.DocumentBlock
}

func mediaOf(p llm.Part, caps llm.Capabilities, docs *docNames) (media, bool) {
	if !caps.Accept(p.Kind) || (caps.MaxPartBytes > 0 && int64(len(p.Data)) > caps.MaxPartBytes) {
		return media{}, false
	}
	var s3 *types.S3Location
	switch {
	case len(p.Data) > 0:
	case strings.HasPrefix(p.URL, "s3://"):
		s3 = &types.S3Location{Uri: aws.String(p.URL)}
	default:
		return media{}, false
	}
	mt := mediaType(p.MediaType)
	switch p.Kind {
	case llm.PartImage:
		f, ok := imageFormats[mt]
		if !ok {
			return media{}, false
		}
		img := &types.ImageBlock{Format: f}
		if s3 != nil {
			img.Source = &types.ImageSourceMemberS3Location{Value: *s3}
		} else {
			img.Source = &types.ImageSourceMemberBytes{Value: p.Data}
		}
		return media{image: img}, true
	case llm.PartDocument:
		f, ok := documentFormats[mt]
		if !ok {
			return media{}, false
		}
		doc := &types.DocumentBlock{Format: f, Name: aws.String(docs.name(p.Name))}
		if s3 != nil {
			doc.Source = &types.DocumentSourceMemberS3Location{Value: *s3}
		} else {
			doc.Source = &types.DocumentSourceMemberBytes{Value: p.Data}
		}
		return media{document: doc}, true
	}
	return media{}, false
}

// contentPart converts a part of a user message.
func contentPart(p llm.Part, caps llm.Capabilities, docs *docNames) types.ContentBlock {
	if p.Kind != llm.PartText {
		if md, ok := mediaOf(p, caps, docs); ok {
			if md.image != nil {
				return &types.ContentBlockMemberImage{Value: *md.image}
			}
			return &types.ContentBlockMemberDocument{Value: *md.document}
		}
	}
	return &types.ContentBlockMemberText{Value: nonBlank(p.Describe())}
}

// resultPart converts a part of a tool result.
func resultPart(p llm.Part, caps llm.Capabilities, docs *docNames) types.ToolResultContentBlock {
	if p.Kind != llm.PartText {
		if md, ok := mediaOf(p, caps, docs); ok {
			if md.image != nil {
				return &types.ToolResultContentBlockMemberImage{Value: *md.image}
			}
			return &types.ToolResultContentBlockMemberDocument{Value: *md.document}
		}
	}
	return &types.ToolResultContentBlockMemberText{Value: nonBlank(p.Describe())}
}

// nonBlank keeps a text block from being blank, which the API rejects.
func nonBlank(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(empty)"
	}
	return s
}

// docNames makes the documents' names what the API takes (letters,
// digits, single spaces, hyphens, parentheses and square brackets) and
// unique within a request.
type docNames struct{ seen map[string]bool }

var (
	docNameBad    = regexp.MustCompile(`[^A-Za-z0-9\-()\[\] ]+`)
	docNameSpaces = regexp.MustCompile(`\s+`)
)

func (d *docNames) name(raw string) string {
	n := docNameBad.ReplaceAllString(raw, "-")
	n = strings.TrimSpace(docNameSpaces.ReplaceAllString(n, " "))
	if len(n) > 200 {
		n = n[:200]
	}
	if n == "" || strings.Trim(n, "-") == "" {
		n = "document"
	}
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	base := n
	for i := 2; d.seen[n]; i++ {
		n = fmt.Sprintf("%s (%d)", base, i)
	}
	d.seen[n] = true
	return n
}

// toDocument decodes JSON into a value the SDK's document encoder writes
// back as the same JSON, numbers exact (json.Number becomes
// document.Number, which the encoder writes as a number).
func toDocument(raw json.RawMessage) (document.Interface, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return document.NewLazyDocument(exactNumbers(v)), nil
}

func exactNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		return smithydocument.Number(t)
	case map[string]any:
		for k, e := range t {
			t[k] = exactNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = exactNumbers(e)
		}
	}
	return v
}

// fromDocument is d as JSON ({} when it cannot be encoded).
func fromDocument(d document.Interface) json.RawMessage {
	if d == nil {
		return json.RawMessage("{}")
	}
	b, err := d.MarshalSmithyDocument()
	if err != nil || len(bytes.TrimSpace(b)) == 0 || !json.Valid(b) {
		return json.RawMessage("{}")
	}
	return b
}
