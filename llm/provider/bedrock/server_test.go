package bedrock

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/aws/smithy-go/eventstream"
	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

// The credentials the tests sign with, from the environment TestMain sets:
// no error may show the secret.
const (
	testAccessKey = "AKIDTESTEXAMPLE00001"
	testSecretKey = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYTESTSECRETKEY"
	// testToken is a Bedrock API key, sent as a bearer token.
	testToken = "ABSKQmVkcm9ja0FQSUtleS1URVNUVE9LRU4wMTIzNDU2Nzg5"
	claudeID  = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
)

func TestMain(m *testing.M) {
	// The tests see no credentials, profile or instance role of the
	// machine they run on: only the static keys below.
	dir, err := os.MkdirTemp("", "bedrock-test")
	if err != nil {
		panic(err)
	}
	for _, k := range []string{"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK",
		"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_BEDROCK_RUNTIME"} {
		_ = os.Unsetenv(k)
	}
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": testAccessKey, "AWS_SECRET_ACCESS_KEY": testSecretKey,
		"AWS_CONFIG_FILE": dir + "/config", "AWS_SHARED_CREDENTIALS_FILE": dir + "/credentials", "AWS_EC2_METADATA_DISABLED": "true"} {
		_ = os.Setenv(k, v)
	}
	failure.SetDefault(providertest.Once)
	code := 0
	func() {
		defer os.RemoveAll(dir)
		code = runChecked(m)
	}()
	os.Exit(code)
}

// runChecked runs the tests, then checks that no goroutine is left behind
// (the SDK's event stream readers included).
func runChecked(m *testing.M) int {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			return 1
		}
	}
	return code
}

// reply is one canned answer of the fake Bedrock endpoint: a JSON body
// (Converse, or an error with its x-amzn-ErrorType), or event-stream
// frames (ConverseStream).
type reply struct {
	status  int
	errType string
	body    string
	events  []frame
	// raw is sent as a stream's body instead of encoded frames.
	raw []byte
}

// frame is one event-stream message: an event or an exception.
type frame struct {
	typ       string // :event-type or :exception-type
	payload   string
	exception bool
}

// seen is a request the fake endpoint received.
type seen struct {
	path   string
	header http.Header
	body   map[string]any
	raw    []byte
}

// server is a local Bedrock runtime endpoint (TLS, as bearer tokens are
// sent over HTTPS only) that answers with replies in order (the last one
// repeats) and records every request.
type server struct {
	*httptest.Server
	mu      sync.Mutex
	replies []reply
	reqs    []seen
}

func newServer(t *testing.T, replies ...reply) *server {
	t.Helper()
	s := &server{replies: replies}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	s.mu.Lock()
	s.reqs = append(s.reqs, seen{path: r.URL.Path, header: r.Header.Clone(), body: body, raw: raw})
	rep := s.replies[0]
	if len(s.replies) > 1 {
		s.replies = s.replies[1:]
	}
	s.mu.Unlock()
	w.Header().Set("x-amzn-RequestId", "req-0001")
	if rep.status == 0 {
		rep.status = 200
	}
	if rep.events == nil && rep.raw == nil {
		w.Header().Set("Content-Type", "application/json")
		if rep.errType != "" {
			w.Header().Set("x-amzn-ErrorType", rep.errType+":http://internal.amazon.com/coral/com.amazon.bedrock/")
		}
		w.WriteHeader(rep.status)
		_, _ = io.WriteString(w, rep.body)
		return
	}
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	w.WriteHeader(rep.status)
	f, _ := w.(http.Flusher)
	stream := rep.raw
	if stream == nil {
		stream = encodeFrames(rep.events)
	}
	// Small writes, flushed, so that frames arrive split across reads.
	for b := stream; len(b) > 0; {
		n := min(len(b), 41)
		_, _ = w.Write(b[:n])
		if f != nil {
			f.Flush()
		}
		b = b[n:]
	}
}

func (s *server) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.reqs...)
}

// encodeFrames encodes frames with the event-stream encoder of smithy-go,
// the library the SDK decodes them with.
func encodeFrames(frames []frame) []byte {
	var buf bytes.Buffer
	enc := eventstream.NewEncoder()
	for _, f := range frames {
		var msg eventstream.Message
		if f.exception {
			msg.Headers.Set(eventstream.ExceptionTypeHeader, eventstream.StringValue(f.typ))
			msg.Headers.Set(eventstream.MessageTypeHeader, eventstream.StringValue(eventstream.ExceptionMessageType))
		} else {
			msg.Headers.Set(eventstream.EventTypeHeader, eventstream.StringValue(f.typ))
			msg.Headers.Set(eventstream.MessageTypeHeader, eventstream.StringValue(eventstream.EventMessageType))
		}
		msg.Headers.Set(eventstream.ContentTypeHeader, eventstream.StringValue("application/json"))
		msg.Payload = []byte(f.payload)
		if err := enc.Encode(&buf, msg); err != nil {
			panic(err)
		}
	}
	return buf.Bytes()
}

// eventsFixture reads a stream fixture: one event a line, its type, a
// space and its JSON payload ("!" before the type marks an exception);
// blank lines and lines starting with # are skipped.
func eventsFixture(t testing.TB, name string) []frame {
	t.Helper()
	var out []frame
	sc := bufio.NewScanner(bytes.NewReader(providertest.Fixture(t, name)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		typ, payload, _ := strings.Cut(line, " ")
		f := frame{typ: typ, payload: payload}
		if t, ok := strings.CutPrefix(typ, "!"); ok {
			f.typ, f.exception = t, true
		}
		if !json.Valid([]byte(f.payload)) {
			t.Fatalf("%s: payload of %s is not JSON: %s", name, typ, payload)
		}
		out = append(out, f)
	}
	return out
}

// jsonReply is a Converse answer from a fixture.
func jsonReply(t testing.TB, name string) reply {
	return reply{body: string(providertest.Fixture(t, name))}
}

// newTestModel returns a model of modelID on s, signing with the test
// keys (or bearing cfg.APIKey when set).
func newTestModel(t *testing.T, s *server, modelID string, edit ...func(*provider.Config)) llm.Model {
	t.Helper()
	cfg := provider.Config{Region: "us-east-1", BaseURL: s.URL, Model: modelID, HTTPClient: s.Client()}
	for _, e := range edit {
		e(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// path walks decoded JSON (providertest.Path).
func path(v any, keys ...any) any { return providertest.Path(v, keys...) }
