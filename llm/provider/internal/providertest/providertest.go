// Package providertest holds what the model providers' tests share: a local
// HTTP server that answers with canned replies in a provider's wire format
// and records what it received, fixtures, and checks of failures.
package providertest

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// Reply is one canned HTTP answer of a fake Server.
type Reply struct {
	Status      int
	ContentType string
	Body        []byte
	// Header holds further response headers (Bedrock's x-amzn-ErrorType).
	Header http.Header
}

// Seen is one request a fake Server received.
type Seen struct {
	Path string
	// Query is the request's raw query ("alt=sse").
	Query  string
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// Server is a local HTTP server that answers with the given replies in
// order (the last one repeats) and records every request.
type Server struct {
	*httptest.Server
	mu      sync.Mutex
	replies []Reply
	reqs    []Seen
}

func NewServer(t *testing.T, replies ...Reply) *Server {
	t.Helper()
	p := &Server{replies: replies}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var raw []byte
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Body.Read(buf)
			raw = append(raw, buf[:n]...)
			if err != nil {
				break
			}
		}
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		p.mu.Lock()
		p.reqs = append(p.reqs, Seen{Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body, Raw: raw})
		rep := p.replies[0]
		if len(p.replies) > 1 {
			p.replies = p.replies[1:]
		}
		p.mu.Unlock()
		for k, v := range rep.Header {
			w.Header()[k] = v
		}
		if rep.ContentType != "" {
			w.Header().Set("Content-Type", rep.ContentType)
		}
		w.WriteHeader(rep.Status)
		if rep.ContentType == "text/event-stream" || rep.ContentType == "application/x-ndjson" {
			// Write the stream (server-sent events, or Ollama's
			// newline-delimited JSON) in small pieces, flushing each, so
			// that the client sees it arrive in chunks that split lines.
			f, _ := w.(http.Flusher)
			for b := rep.Body; len(b) > 0; {
				n := min(len(b), 37)
				_, _ = w.Write(b[:n])
				if f != nil {
					f.Flush()
				}
				b = b[n:]
			}
			return
		}
		_, _ = w.Write(rep.Body)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *Server) Requests() []Seen {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Seen(nil), p.reqs...)
}

func Fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func WeatherTools() []llm.ToolDef {
	return []llm.ToolDef{{Name: "get_weather", Description: "Current weather of a city.",
		Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string"}},"required":["city"]}`)}}
}

// path walks decoded JSON: strings index objects, ints index arrays.
func Path(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func JSONEqual(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("%s: %q is not JSON: %v", what, got, err)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("%s = %s, want %s", what, gb, wb)
	}
}

// UserReq is a request with one user message.
func UserReq(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: text}}}
}

// CheckFailure checks the classification of err and that the key appears
// nowhere in what a log or the model would see.
func CheckFailure(t *testing.T, err error, kind failure.Kind, retryable bool, name, key string) {
	t.Helper()
	var fe *failure.Error
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v (%T), want a *failure.Error", err, err)
	}
	if !errors.Is(err, kind) {
		t.Errorf("kind = %v, want %v (%v)", fe.Kind, kind, err)
	}
	if fe.Source != failure.SourceModel || fe.Name != name {
		t.Errorf("source, name = %q, %q", fe.Source, fe.Name)
	}
	if fe.Retryable != retryable {
		t.Errorf("retryable = %v, want %v", fe.Retryable, retryable)
	}
	for what, text := range map[string]string{"Error()": err.Error(), "ModelText": fe.ModelText(), "Message": fe.Message} {
		if strings.Contains(text, key) || strings.Contains(text, key[len(key)-8:]) {
			t.Errorf("%s leaks the key: %s", what, text)
		}
	}
}

// NewHangingServer answers nothing until the client gives up.
func NewHangingServer(t *testing.T) *Server {
	p := &Server{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server notices a client that went away only once the body
		// has been read.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(p.Close)
	return p
}

// CompareBench runs baseline and subject once each per iteration,
// alternating so that both see the same load on a shared machine, and
// reports both costs and their ratio.
func CompareBench(b *testing.B, baseName string, baseline func(), name string, subject func()) {
	b.Helper()
	baseline()
	subject()
	var baseD, subD time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		baseline()
		t1 := time.Now()
		subject()
		subD += time.Since(t1)
		baseD += t1.Sub(t0)
	}
	baseNs := float64(baseD.Nanoseconds()) / float64(b.N)
	subNs := float64(subD.Nanoseconds()) / float64(b.N)
	b.ReportMetric(baseNs, baseName+"-ns/op")
	b.ReportMetric(subNs, name+"-ns/op")
	b.ReportMetric(subNs/baseNs, name+"/"+baseName)
}

// Final answers, as each provider sends them: a turn with text and no tool calls.
const OpenAIFinal = `{"id":"chatcmpl-F1","object":"chat.completion","created":1767225601,"model":"gpt-4o-mini",
"choices":[{"index":0,"message":{"role":"assistant","content":"Paris is 18°C; Oslo is unknown."},"finish_reason":"stop"}],
"usage":{"prompt_tokens":150,"completion_tokens":9,"total_tokens":159}}`

const AnthropicFinal = `{"id":"msg_final","type":"message","role":"assistant","model":"claude-sonnet-4-5",
"content":[{"type":"text","text":"Paris is 18°C; Oslo is unknown."}],"stop_reason":"end_turn","stop_sequence":null,
"usage":{"input_tokens":610,"output_tokens":12}}`

const GeminiFinal = `{"candidates":[{"content":{"parts":[{"text":"Paris is 18°C; Oslo is unknown."}],"role":"model"},"finishReason":"STOP","index":0}],
"usageMetadata":{"promptTokenCount":171,"candidatesTokenCount":10,"totalTokenCount":181},"modelVersion":"gemini-2.5-flash","responseId":"bJlOaYCBH5-x1dkP9K6rwQo"}`

// OllamaFinal is Ollama's final answer (/api/chat, not streamed).
const OllamaFinal = `{"model":"llama3.2","created_at":"2026-12-01T10:20:31.5Z","message":{"role":"assistant","content":"Paris is 18°C; Oslo is unknown."},
"done_reason":"stop","done":true,"total_duration":485095291,"load_duration":1753500,"prompt_eval_count":180,"prompt_eval_duration":128493000,"eval_count":11,"eval_duration":152222000}`

// Keys the tests' providers are configured with: no error or log line may
// show them.
const (
	OpenAIKey    = "sk-test-0123456789abcdefSECRETKEY"
	AnthropicKey = "sk-ant-api03-test0123456789SECRETKEY"
	GeminiKey    = "AIzaSyTest0123456789abcdefSECRETKEY"
)

// Once is a failure policy of one attempt and no circuit, so that a test
// sees how one answer is classified.
var Once = failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 1, BreakerFailures: 1 << 30})
