package provider

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// onceDefault is the process default of this package's tests: one attempt
// and no circuit, so that each test sees how one answer is classified (a
// Config without a Policy uses the default).
var onceDefault = failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 1, BreakerFailures: 1 << 30})

func TestMain(m *testing.M) {
	failure.SetDefault(onceDefault)
	goleak.VerifyTestMain(m)
}

// reply is one canned HTTP answer of a fake provider.
type reply struct {
	status      int
	contentType string
	body        []byte
}

// seen is one request a fake provider received.
type seen struct {
	path   string
	header http.Header
	body   map[string]any
	raw    []byte
}

// provider is a local HTTP server that answers with the given replies in
// order (the last one repeats) and records every request.
type provider struct {
	*httptest.Server
	mu      sync.Mutex
	replies []reply
	reqs    []seen
}

func newProvider(t *testing.T, replies ...reply) *provider {
	t.Helper()
	p := &provider{replies: replies}
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
		p.reqs = append(p.reqs, seen{path: r.URL.Path, header: r.Header.Clone(), body: body, raw: raw})
		rep := p.replies[0]
		if len(p.replies) > 1 {
			p.replies = p.replies[1:]
		}
		p.mu.Unlock()
		if rep.contentType != "" {
			w.Header().Set("Content-Type", rep.contentType)
		}
		w.WriteHeader(rep.status)
		if rep.contentType == "text/event-stream" {
			// Write the stream in small pieces, flushing each, so that the
			// client sees it arrive in chunks that split lines.
			f, _ := w.(http.Flusher)
			for b := rep.body; len(b) > 0; {
				n := min(len(b), 37)
				_, _ = w.Write(b[:n])
				if f != nil {
					f.Flush()
				}
				b = b[n:]
			}
			return
		}
		_, _ = w.Write(rep.body)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *provider) requests() []seen {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]seen(nil), p.reqs...)
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func weatherTools() []llm.ToolDef {
	return []llm.ToolDef{{Name: "get_weather", Description: "Current weather of a city.",
		Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string"}},"required":["city"]}`)}}
}

// path walks decoded JSON: strings index objects, ints index arrays.
func path(v any, keys ...any) any {
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

func jsonEqual(t *testing.T, what string, got json.RawMessage, want string) {
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

func httptestServer(h http.Handler) *httptest.Server { return httptest.NewServer(h) }

func jsonMarshal(v any) (json.RawMessage, error) { return json.Marshal(v) }

// userReq is a request with one user message.
func userReq(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: text}}}
}
