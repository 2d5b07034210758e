package bedrock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		name      string
		rep       reply
		kind      failure.Kind
		retryable bool
		msg       string // a part of the failure's message
	}{
		{"throttled", reply{status: 429, errType: "ThrottlingException", body: `{"message":"Too many requests, please wait before trying again."}`},
			failure.Transient, true, "HTTP 429 (ThrottlingException): Too many requests"},
		{"unavailable", reply{status: 503, errType: "ServiceUnavailableException", body: `{"message":"Bedrock is unable to process your request."}`},
			failure.Transient, true, "ServiceUnavailableException"},
		{"internal", reply{status: 500, errType: "InternalServerException", body: `{"message":"The server encountered an error processing your request."}`},
			failure.Transient, true, "HTTP 500"},
		{"5xx of no known code", reply{status: 502, body: `<html>Bad Gateway</html>`}, failure.Transient, true, "HTTP 502"},
		{"access denied", reply{status: 403, errType: "AccessDeniedException", body: `{"message":"You don't have access to the model with the specified model ID."}`},
			failure.PermissionDenied, false, "AccessDeniedException"},
		{"bad signature", reply{status: 403, errType: "InvalidSignatureException", body: `{"message":"The request signature we calculated does not match the signature you provided."}`},
			failure.PermissionDenied, false, "InvalidSignatureException"},
		{"context too long", reply{status: 400, errType: "ValidationException", body: `{"message":"Input is too long for requested model."}`},
			failure.Budget, false, "the prompt does not fit the model's context window (the provider said: ValidationException: Input is too long"},
		{"invalid request", reply{status: 400, errType: "ValidationException", body: `{"message":"The model returned the following errors: messages: roles must alternate"}`},
			failure.Model, false, "HTTP 400 (ValidationException): The model returned the following errors"},
		{"model timeout", reply{status: 408, errType: "ModelTimeoutException", body: `{"message":"The request took too long to process."}`},
			failure.Timeout, false, "ModelTimeoutException"},
		{"unknown model", reply{status: 404, errType: "ResourceNotFoundException", body: `{"message":"Could not resolve the foundation model from the provided model identifier."}`},
			failure.Model, false, "ResourceNotFoundException"},
		{"not JSON", reply{body: `{"output":`}, failure.Protocol, false, "could not be read"},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.name, stream), func(t *testing.T) {
				if stream && tt.rep.status == 0 {
					t.Skip("a stream's body is frames")
				}
				s := newServer(t, tt.rep)
				m := newTestModel(t, s, claudeID)
				req := providertest.UserReq("hi")
				if stream {
					req.OnText = func(string) {}
				}
				_, err := m.Generate(t.Context(), req)
				providertest.CheckFailure(t, err, tt.kind, tt.retryable, m.Name(), testSecretKey)
				var fe *failure.Error
				if errors.As(err, &fe) && !strings.Contains(fe.Message, tt.msg) {
					t.Errorf("message = %q, want it to contain %q", fe.Message, tt.msg)
				}
			})
		}
	}
}

// TestStreamErrors: an exception the service sends mid-stream, a stream
// cut before messageStop, and bytes that are not event-stream frames.
func TestStreamErrors(t *testing.T) {
	start := []frame{{typ: "messageStart", payload: `{"role":"assistant"}`},
		{typ: "contentBlockDelta", payload: `{"contentBlockIndex":0,"delta":{"text":"Hel"}}`}}
	exception := func(typ, msg string) []frame {
		return append(append([]frame(nil), start...), frame{typ: typ, payload: `{"message":"` + msg + `"}`, exception: true})
	}
	tests := []struct {
		name      string
		rep       reply
		kind      failure.Kind
		retryable bool
		msg       string
		text      string // what OnText received before the failure
	}{
		{"model stream error", reply{events: eventsFixture(t, "stream_error.events")}, failure.Transient, true,
			"failed while streaming (ModelStreamErrorException): Model stream error", "Hel"},
		{"throttled mid-stream", reply{events: exception("throttlingException", "Too many tokens, please wait before trying again.")},
			failure.Transient, true, "ThrottlingException", "Hel"},
		{"invalid mid-stream", reply{events: exception("validationException", "Input is too long for requested model.")},
			failure.Budget, false, "context window", "Hel"},
		{"cut before messageStop", reply{events: start}, failure.Transient, true, "ended before messageStop", "Hel"},
		{"not frames", reply{raw: []byte("this is not an event stream, it is plain text that goes on for a while")},
			failure.Protocol, false, "event stream is malformed", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.rep)
			m := newTestModel(t, s, claudeID)
			var got strings.Builder
			req := providertest.UserReq("hi")
			req.OnText = func(d string) { got.WriteString(d) }
			_, err := m.Generate(t.Context(), req)
			providertest.CheckFailure(t, err, tt.kind, tt.retryable, m.Name(), testSecretKey)
			var fe *failure.Error
			if errors.As(err, &fe) && !strings.Contains(fe.Message, tt.msg) {
				t.Errorf("message = %q, want it to contain %q", fe.Message, tt.msg)
			}
			if got.String() != tt.text {
				t.Errorf("streamed %q before the failure, want %q", got.String(), tt.text)
			}
		})
	}
}

// sigV4 is the shape of a SigV4 Authorization header for the test keys.
var sigV4 = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=` + testAccessKey + `/\d{8}/us-east-1/bedrock/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$`)

// TestAuthentication: requests are SigV4-signed with the chain's
// credentials, or carry a Bedrock API key (Config.APIKey, or the SDK's
// AWS_BEARER_TOKEN_BEDROCK) as a bearer token, which no failure shows.
func TestAuthentication(t *testing.T) {
	t.Run("sigv4", func(t *testing.T) {
		s := newServer(t, jsonReply(t, "converse_final.json"))
		m := newTestModel(t, s, claudeID)
		if _, err := m.Generate(t.Context(), providertest.UserReq("hi")); err != nil {
			t.Fatal(err)
		}
		h := s.requests()[0].header
		if a := h.Get("Authorization"); !sigV4.MatchString(a) {
			t.Errorf("Authorization = %q, want a SigV4 signature", a)
		}
		if h.Get("X-Amz-Date") == "" {
			t.Errorf("no X-Amz-Date header: %v", h)
		}
	})
	t.Run("api key", func(t *testing.T) {
		s := newServer(t, reply{status: 403, errType: "AccessDeniedException",
			body: `{"message":"Authentication failed: the key ` + testToken + ` is not valid"}`})
		m := newTestModel(t, s, claudeID, func(c *provider.Config) { c.APIKey = testToken })
		_, err := m.Generate(t.Context(), providertest.UserReq("hi"))
		providertest.CheckFailure(t, err, failure.PermissionDenied, false, m.Name(), testToken)
		h := s.requests()[0].header
		if a := h.Get("Authorization"); a != "Bearer "+testToken {
			t.Errorf("Authorization = %q, want the bearer token", a)
		}
		if strings.Contains(m.Name(), testToken) {
			t.Errorf("name %q shows the key", m.Name())
		}
	})
	t.Run("api key from the environment", func(t *testing.T) {
		t.Setenv("AWS_BEARER_TOKEN_BEDROCK", testToken)
		s := newServer(t, reply{status: 429, errType: "ThrottlingException", body: `{"message":"slow down, ` + testToken + `"}`})
		m := newTestModel(t, s, claudeID)
		_, err := m.Generate(t.Context(), providertest.UserReq("hi"))
		providertest.CheckFailure(t, err, failure.Transient, true, m.Name(), testToken)
		if a := s.requests()[0].header.Get("Authorization"); a != "Bearer "+testToken {
			t.Errorf("Authorization = %q, want the bearer token", a)
		}
	})
	t.Run("api key over http", func(t *testing.T) {
		_, err := New(provider.Config{Region: "us-east-1", APIKey: testToken, BaseURL: "http://127.0.0.1:9"})
		if !errors.Is(err, failure.Config) || strings.Contains(err.Error(), testToken) {
			t.Errorf("New with an API key over http: %v, want a Config failure", err)
		}
	})
	t.Run("no credentials", func(t *testing.T) {
		s := newServer(t, jsonReply(t, "converse_final.json"))
		none := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{}, errors.New("failed to refresh cached credentials, no EC2 IMDS role found")
		})
		m, err := NewFromConfig(aws.Config{Region: "us-east-1", Credentials: none},
			provider.Config{BaseURL: s.URL, HTTPClient: s.Client(), Model: claudeID})
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Generate(t.Context(), providertest.UserReq("hi"))
		providertest.CheckFailure(t, err, failure.Config, false, m.Name(), testSecretKey)
		if len(s.requests()) != 0 {
			t.Errorf("an unsigned request was sent")
		}
		if _, err := NewFromConfig(aws.Config{Region: "us-east-1"}, provider.Config{}); !errors.Is(err, failure.Config) {
			t.Errorf("NewFromConfig without credentials: %v, want a Config failure", err)
		}
	})
}

func TestTransportErrors(t *testing.T) {
	p := providertest.NewHangingServer(t)
	m, err := New(provider.Config{Region: "us-east-1", BaseURL: p.URL, Model: claudeID, HTTPClient: p.Client()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = m.Generate(ctx, providertest.UserReq("hi"))
	providertest.CheckFailure(t, err, failure.Timeout, false, m.Name(), testSecretKey)
	p.Close()
	_, err = m.Generate(t.Context(), providertest.UserReq("hi"))
	providertest.CheckFailure(t, err, failure.Transient, true, m.Name(), testSecretKey)
}

// TestPolicyRetries: Config.Policy retries a 429 and a 503 (the SDK's own
// retries are off, so each attempt is one request).
func TestPolicyRetries(t *testing.T) {
	s := newServer(t,
		reply{status: 429, errType: "ThrottlingException", body: `{"message":"Too many requests"}`},
		reply{status: 503, errType: "ServiceUnavailableException", body: `{"message":"unavailable"}`},
		jsonReply(t, "converse_final.json"))
	policy := failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	m := newTestModel(t, s, claudeID, func(c *provider.Config) { c.Policy = policy })
	resp, err := m.Generate(t.Context(), providertest.UserReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text != "Paris is 18°C; Oslo is unknown." || len(s.requests()) != 3 {
		t.Errorf("text %q after %d requests", resp.Message.Text, len(s.requests()))
	}
}

// TestStreamCancelled cancels the call from OnText while the server holds
// the stream open: Generate returns Canceled, and no text arrives after it
// returns (TestMain checks that no goroutine is left).
func TestStreamCancelled(t *testing.T) {
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	s := &server{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		_, _ = w.Write(encodeFrames([]frame{{typ: "messageStart", payload: `{"role":"assistant"}`},
			{typ: "contentBlockDelta", payload: `{"contentBlockIndex":0,"delta":{"text":"Hel"}}`}}))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-hold:
		}
	}))
	t.Cleanup(s.Close)
	m := newTestModel(t, s, claudeID)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var got []string
	returned := false
	req := providertest.UserReq("hi")
	req.OnText = func(d string) {
		if returned {
			t.Errorf("OnText(%q) after Generate returned", d)
		}
		got = append(got, d)
		cancel()
	}
	_, err := m.Generate(ctx, req)
	returned = true
	providertest.CheckFailure(t, err, failure.Canceled, false, m.Name(), testSecretKey)
	if fmt.Sprint(got) != "[Hel]" {
		t.Errorf("streamed %q", got)
	}
}

var _ llm.Describer = (*model)(nil)

// TestBoundedBody: a body longer than its bound fails with errTooLong
// once the bound is read, which classify reports as a protocol failure;
// a body of exactly the bound reads to its end.
func TestBoundedBody(t *testing.T) {
	for _, tt := range []struct {
		body    string
		bound   int64
		wantErr error
	}{{"0123456789", 4, errTooLong}, {"0123", 4, nil}, {"", 4, nil}} {
		b := &boundedBody{rc: io.NopCloser(strings.NewReader(tt.body)), left: tt.bound}
		got, err := io.ReadAll(b)
		if !errors.Is(err, tt.wantErr) || string(got) != tt.body[:min(len(tt.body), int(tt.bound))] {
			t.Errorf("%q bounded by %d: read %q, %v", tt.body, tt.bound, got, err)
		}
	}
	m, err := New(provider.Config{Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	f := m.(*model).classify(t.Context(), fmt.Errorf("operation error: deserialization failed: %w", errTooLong))
	if f.Kind != failure.Protocol || !strings.Contains(f.Message, "longer than") {
		t.Errorf("classify(errTooLong) = %v", f)
	}
}
