package tokens

import (
	"bytes"
	"encoding/binary"
	"image"
	_ "image/gif" // registers GIF for image.DecodeConfig
	_ "image/jpeg"
	_ "image/png"
	"math"
	"strings"

	_ "golang.org/x/image/webp" // registers WebP for image.DecodeConfig
)

// Media estimates are by each provider's published rule; the rule is chosen
// by the model's name (Rule). An image's size is read from its header
// (image.DecodeConfig: PNG, JPEG, GIF, WebP); an image whose size cannot be
// read (a URL, an unknown format) costs its rule's largest image.

// Rule is a provider's way of counting media tokens.
type Rule int

// Rules.
const (
	// RuleDefault is the largest of the three rules for each image: a model
	// of unknown provider is not under-counted.
	RuleDefault Rule = iota
	// RuleAnthropic: an image is scaled down to fit 1568 px on its long
	// edge and about 1.15 megapixels, then costs width*height/750 tokens.
	RuleAnthropic
	// RuleOpenAI (high detail): an image is scaled down to fit 2048x2048,
	// then so that its shortest side is at most 768 px; it costs 85 tokens
	// plus 170 per 512x512 tile.
	RuleOpenAI
	// RuleGemini: an image of at most 384 px on both sides costs 258
	// tokens; a larger one 258 per 768x768 tile.
	RuleGemini
)

// RuleFor returns the rule of the named model: by its provider prefix
// ("anthropic/", "openai/", "gemini/", "google/", "vertex/"), else by the
// model's own name ("claude...", "gpt-...", "o1"..., "gemini..."), else
// RuleDefault.
func RuleFor(model string) Rule {
	m := strings.ToLower(strings.TrimSpace(model))
	switch {
	case strings.HasPrefix(m, "anthropic/"), strings.HasPrefix(m, "bedrock/anthropic"):
		return RuleAnthropic
	case strings.HasPrefix(m, "openai/"), strings.HasPrefix(m, "azure/"):
		return RuleOpenAI
	case strings.HasPrefix(m, "gemini/"), strings.HasPrefix(m, "google/"), strings.HasPrefix(m, "vertex/"):
		return RuleGemini
	}
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	switch {
	case strings.HasPrefix(m, "claude"):
		return RuleAnthropic
	case strings.HasPrefix(m, "gpt-"), strings.HasPrefix(m, "chatgpt"),
		len(m) >= 2 && m[0] == 'o' && m[1] >= '1' && m[1] <= '9':
		return RuleOpenAI
	case strings.HasPrefix(m, "gemini"):
		return RuleGemini
	}
	return RuleDefault
}

// Rule constants.
const (
	anthropicLongEdge  = 1568
	anthropicMaxPixels = 1_150_000
	anthropicPerToken  = 750
	openAIBox          = 2048
	openAIShort        = 768
	openAITile         = 512
	openAIBase         = 85
	openAIPerTile      = 170
	geminiSmall        = 384
	geminiTile         = 768
	geminiPerTile      = 258
	// unknownSide is the side of the square image assumed when an image's
	// size cannot be read: Anthropic's largest (1533 tokens), OpenAI's
	// largest square (765), 4 Gemini tiles (1032).
	unknownSide = 1536
)

// ImageSize is the tokens of a w x h image under rule r.
func ImageSize(r Rule, w, h int) int {
	if w <= 0 || h <= 0 {
		return 0
	}
	switch r {
	case RuleAnthropic:
		fw, fh := float64(w), float64(h)
		if long := math.Max(fw, fh); long > anthropicLongEdge {
			s := anthropicLongEdge / long
			fw, fh = fw*s, fh*s
		}
		if px := fw * fh; px > anthropicMaxPixels {
			s := math.Sqrt(anthropicMaxPixels / px)
			fw, fh = fw*s, fh*s
		}
		return int(math.Ceil(math.Floor(fw) * math.Floor(fh) / anthropicPerToken))
	case RuleOpenAI:
		fw, fh := float64(w), float64(h)
		if long := math.Max(fw, fh); long > openAIBox {
			s := openAIBox / long
			fw, fh = fw*s, fh*s
		}
		if short := math.Min(fw, fh); short > openAIShort {
			s := openAIShort / short
			fw, fh = fw*s, fh*s
		}
		tiles := int(math.Ceil(math.Floor(fw)/openAITile)) * int(math.Ceil(math.Floor(fh)/openAITile))
		return openAIBase + openAIPerTile*tiles
	case RuleGemini:
		if w <= geminiSmall && h <= geminiSmall {
			return geminiPerTile
		}
		return geminiPerTile * ceilDiv(w, geminiTile) * ceilDiv(h, geminiTile)
	}
	return max(ImageSize(RuleAnthropic, w, h), ImageSize(RuleOpenAI, w, h), ImageSize(RuleGemini, w, h))
}

// Image is the tokens of an encoded image under rule r: its size read from
// its header, or, when that cannot be read (no data, an unknown format),
// that of a 1536x1536 image.
func Image(r Rule, data []byte) int {
	if w, h, ok := ImageDimensions(data); ok {
		return ImageSize(r, w, h)
	}
	return ImageSize(r, unknownSide, unknownSide)
}

// ImageDimensions reads an image's width and height from its header (PNG,
// JPEG, GIF, WebP) without decoding it.
func ImageDimensions(data []byte) (w, h int, ok bool) {
	if len(data) == 0 {
		return 0, 0, false
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return 0, 0, false
	}
	return cfg.Width, cfg.Height, true
}

// Document estimates (no page is rendered): a PDF costs pdfPageTokens per
// page under Anthropic's and OpenAI's rules (each page is sent as its text
// and as an image: Anthropic documents 1,500 to 3,000 tokens per page) and
// 258 under Gemini's; its pages are counted from its page objects, or, in a
// PDF whose objects are compressed, estimated as one per pdfBytesPerPage.
// A text document costs its text.
const (
	pdfPageTokens   = 3000
	pdfBytesPerPage = 50 << 10
)

// Document is the tokens of a document part under rule r.
func Document(r Rule, mediaType string, data []byte) int {
	mt := strings.ToLower(mediaType)
	if strings.HasPrefix(mt, "text/") || mt == "application/json" {
		return Count(string(data))
	}
	pages := PDFPages(data)
	if r == RuleGemini {
		return pages * geminiPerTile
	}
	return pages * pdfPageTokens
}

// PDFPages estimates a PDF's pages: its "/Type /Page" objects, or one per
// 50 KiB (at least one) when there are none to see.
func PDFPages(data []byte) int {
	n := 0
	for rest := data; ; {
		i := bytes.Index(rest, []byte("/Type"))
		if i < 0 {
			break
		}
		rest = rest[i+len("/Type"):]
		t := bytes.TrimLeft(rest, " \t\r\n")
		if bytes.HasPrefix(t, []byte("/Page")) && !bytes.HasPrefix(t, []byte("/Pages")) {
			n++
		}
	}
	if n == 0 {
		n = max(1, ceilDiv(len(data), pdfBytesPerPage))
	}
	return n
}

// Audio estimates: Gemini counts 32 tokens per second of audio, OpenAI
// about 10 (one per 100 ms); Anthropic takes no audio (RuleAnthropic and
// RuleDefault count Gemini's). The duration is read from a WAV header, or
// assumed from the size at 16 KB per second (128 kbit/s) for other formats.
const (
	geminiAudioPerSecond = 32
	openAIAudioPerSecond = 10
	audioBytesPerSecond  = 16_000
)

// Audio is the tokens of an audio part under rule r.
func Audio(r Rule, data []byte) int {
	secs := AudioSeconds(data)
	per := geminiAudioPerSecond
	if r == RuleOpenAI {
		per = openAIAudioPerSecond
	}
	return int(math.Ceil(secs * float64(per)))
}

// AudioSeconds is the duration of audio: from a WAV (RIFF) header's byte
// rate, or its size at 16 KB per second.
func AudioSeconds(data []byte) float64 {
	if len(data) >= 44 && string(data[0:4]) == "RIFF" && string(data[8:12]) == "WAVE" {
		// The fmt chunk's byte rate; the data is what follows the header.
		for off := 12; off+8 <= len(data); {
			id := string(data[off : off+4])
			size := int(binary.LittleEndian.Uint32(data[off+4 : off+8]))
			if id == "fmt " && size >= 16 && off+20 <= len(data) {
				if rate := binary.LittleEndian.Uint32(data[off+16 : off+20]); rate > 0 {
					return float64(len(data)-44) / float64(rate)
				}
				break
			}
			if size > len(data)-off-8 {
				break
			}
			off += 8 + size + size%2
		}
	}
	return float64(len(data)) / audioBytesPerSecond
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
