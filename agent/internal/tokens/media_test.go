package tokens_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-dev/switchboard/agent/internal/tokens"
)

func readMedia(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "media", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestImageTokens counts the fixture images by each provider's rule. The
// expected counts are worked out by hand from the published rules:
//
//	Anthropic: fit 1568 px long edge and 1.15 MP, then ceil(w*h/750)
//	  1000x500: 500,000/750 = 666.7 -> 667
//	  2048x4096: 784x1568 (1.23 MP) -> 758x1516 -> 1,149,128/750 -> 1533
//	  200x200: 40,000/750 = 53.3 -> 54; 800x600: 480,000/750 = 640
//	  300x150: 45,000/750 = 60; unknown (1536x1536 -> 1072x1072) -> 1533
//	OpenAI (high): fit 2048x2048, shortest side to 768, 85 + 170 per 512 tile
//	  1000x500: 2x1 tiles -> 425; 2048x4096: 1024x2048 -> 768x1536, 2x3 -> 1105
//	  200x200 and 300x150: 1 tile -> 255; 800x600: 2x2 -> 765
//	  unknown: 768x768, 2x2 -> 765
//	Gemini: 258 when both sides <= 384, else 258 per 768x768 tile
//	  1000x500: 2x1 -> 516; 2048x4096: 3x6 -> 4644; 200x200, 300x150 -> 258
//	  800x600: 2x1 -> 516; unknown: 2x2 -> 1032
//	Default: the largest of the three.
func TestImageTokens(t *testing.T) {
	cases := []struct {
		file                      string
		w, h                      int
		anthropic, openai, gemini int
	}{
		{"1000x500.png", 1000, 500, 667, 425, 516},
		{"2048x4096.png", 2048, 4096, 1533, 1105, 4644},
		{"200x200.gif", 200, 200, 54, 255, 258},
		{"800x600.jpg", 800, 600, 640, 765, 516},
		{"300x150.webp", 300, 150, 60, 255, 258},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			data := readMedia(t, c.file)
			w, h, ok := tokens.ImageDimensions(data)
			if !ok || w != c.w || h != c.h {
				t.Fatalf("dimensions = %dx%d (%v), want %dx%d", w, h, ok, c.w, c.h)
			}
			want := map[tokens.Rule]int{tokens.RuleAnthropic: c.anthropic, tokens.RuleOpenAI: c.openai, tokens.RuleGemini: c.gemini,
				tokens.RuleDefault: max(c.anthropic, c.openai, c.gemini)}
			for rule, n := range want {
				if got := tokens.Image(rule, data); got != n {
					t.Errorf("rule %d: %d tokens, want %d", rule, got, n)
				}
			}
		})
	}
	unknown := []byte("not an image at all")
	for rule, n := range map[tokens.Rule]int{tokens.RuleAnthropic: 1533, tokens.RuleOpenAI: 765, tokens.RuleGemini: 1032, tokens.RuleDefault: 1533} {
		if got := tokens.Image(rule, unknown); got != n {
			t.Errorf("unknown image, rule %d: %d tokens, want %d", rule, got, n)
		}
	}
}

// TestImageSizeOpenAIDocs checks the worked examples of OpenAI's vision
// guide (high detail).
func TestImageSizeOpenAIDocs(t *testing.T) {
	for _, c := range []struct{ w, h, want int }{{1024, 1024, 765}, {2048, 4096, 1105}, {4096, 8192, 1105}, {512, 512, 255}} {
		if got := tokens.ImageSize(tokens.RuleOpenAI, c.w, c.h); got != c.want {
			t.Errorf("%dx%d: %d tokens, want %d", c.w, c.h, got, c.want)
		}
	}
	if got := tokens.ImageSize(tokens.RuleAnthropic, 0, 10); got != 0 {
		t.Errorf("an empty image costs %d tokens", got)
	}
}

func TestRuleFor(t *testing.T) {
	for _, c := range []struct {
		model string
		want  tokens.Rule
	}{
		{"anthropic/claude-sonnet-4-5", tokens.RuleAnthropic},
		{"openai/gpt-4o-mini", tokens.RuleOpenAI},
		{"gemini/gemini-2.5-flash", tokens.RuleGemini},
		{"google/gemini-2.0-flash", tokens.RuleGemini},
		{"ollama/llava", tokens.RuleDefault},
		{"gpt-4.1", tokens.RuleOpenAI},
		{"o3-mini", tokens.RuleOpenAI},
		{"claude-3-haiku", tokens.RuleAnthropic},
		{"ollama/gemini-clone", tokens.RuleGemini},
		{"scripted (offline, deterministic; not a real model)", tokens.RuleDefault},
		{"", tokens.RuleDefault},
	} {
		if got := tokens.RuleFor(c.model); got != c.want {
			t.Errorf("RuleFor(%q) = %d, want %d", c.model, got, c.want)
		}
	}
}

// wav returns a PCM WAV file of secs seconds at byteRate bytes a second.
func wav(secs float64, byteRate int) []byte {
	var b bytes.Buffer
	n := int(secs * float64(byteRate))
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(36+n))
	b.WriteString("WAVEfmt ")
	binary.Write(&b, binary.LittleEndian, uint32(16))
	binary.Write(&b, binary.LittleEndian, uint16(1))          // PCM
	binary.Write(&b, binary.LittleEndian, uint16(1))          // mono
	binary.Write(&b, binary.LittleEndian, uint32(byteRate/2)) // sample rate
	binary.Write(&b, binary.LittleEndian, uint32(byteRate))   // byte rate
	binary.Write(&b, binary.LittleEndian, uint16(2))          // block align
	binary.Write(&b, binary.LittleEndian, uint16(16))         // bits
	b.WriteString("data")
	binary.Write(&b, binary.LittleEndian, uint32(n))
	b.Write(make([]byte, n))
	return b.Bytes()
}

func TestDocumentAndAudioTokens(t *testing.T) {
	pdf := readMedia(t, "3pages.pdf")
	compressed := append([]byte("%PDF-1.7\n"), make([]byte, 120<<10)...) // no page object to see
	cases := []struct {
		name string
		got  int
		want int
	}{
		{"pdf pages", tokens.PDFPages(pdf), 3},
		{"pdf anthropic", tokens.Document(tokens.RuleAnthropic, "application/pdf", pdf), 9000},
		{"pdf gemini", tokens.Document(tokens.RuleGemini, "application/pdf", pdf), 3 * 258},
		{"compressed pdf pages (one per 50 KiB)", tokens.PDFPages(compressed), 3},
		{"empty pdf", tokens.PDFPages(nil), 1},
		{"text document", tokens.Document(tokens.RuleOpenAI, "text/plain", []byte("hello world")), tokens.Count("hello world")},
		{"wav 2 s gemini", tokens.Audio(tokens.RuleGemini, wav(2, 32000)), 64},
		{"wav 2 s openai", tokens.Audio(tokens.RuleOpenAI, wav(2, 32000)), 20},
		{"wav 1.5 s default", tokens.Audio(tokens.RuleDefault, wav(1.5, 16000)), 48},
		{"mp3 of 32,000 bytes (2 s at 128 kbit/s)", tokens.Audio(tokens.RuleGemini, make([]byte, 32000)), 64},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
}

// FuzzMediaHeaders feeds outside bytes to the header readers: no panic,
// and no negative counts.
func FuzzMediaHeaders(f *testing.F) {
	for _, name := range []string{"1000x500.png", "200x200.gif", "800x600.jpg", "300x150.webp", "3pages.pdf"} {
		f.Add(readMedia(f, name))
	}
	f.Add(wav(0.5, 8000))
	f.Add([]byte("RIFF\xff\xff\xff\xffWAVEfmt \xff\xff\xff\xff"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x10\x00data"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if w, h, ok := tokens.ImageDimensions(data); ok && (w <= 0 || h <= 0) {
			t.Fatalf("dimensions %dx%d", w, h)
		}
		for _, r := range []tokens.Rule{tokens.RuleDefault, tokens.RuleAnthropic, tokens.RuleOpenAI, tokens.RuleGemini} {
			if tokens.Image(r, data) <= 0 || tokens.Audio(r, data) < 0 || tokens.Document(r, "application/pdf", data) <= 0 {
				t.Fatalf("a count is not positive for rule %d", r)
			}
		}
		if s := tokens.AudioSeconds(data); s < 0 {
			t.Fatalf("%v seconds", s)
		}
	})
}
