package wstransport_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/mcp/internal/wstransport"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"))
}

type in struct {
	Text string `json:"text"`
}

func server() *gomcp.Server {
	s := gomcp.NewServer(&gomcp.Implementation{Name: "ws-test", Version: "1"}, nil)
	gomcp.AddTool(s, &gomcp.Tool{Name: "upper"}, func(ctx context.Context, req *gomcp.CallToolRequest, a in) (*gomcp.CallToolResult, any, error) {
		return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: strings.ToUpper(a.Text)}}}, nil, nil
	})
	return s
}

func TestRoundTrip(t *testing.T) {
	srv := server()
	hs := httptest.NewServer(wstransport.NewHandler(func(*http.Request) *gomcp.Server { return srv }, nil))
	defer hs.Close()
	tests := []struct{ name, url string }{
		{"ws scheme", "ws" + strings.TrimPrefix(hs.URL, "http")},
		{"http scheme", hs.URL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c := gomcp.NewClient(&gomcp.Implementation{Name: "c", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &wstransport.ClientTransport{URL: tt.url}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "upper", Arguments: json.RawMessage(`{"text":"abc"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*gomcp.TextContent).Text; got != "ABC" {
				t.Fatalf("got %q", got)
			}
		})
	}
}

func TestHandshakeRefused(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusForbidden)
	}))
	defer hs.Close()
	_, err := (&wstransport.ClientTransport{URL: hs.URL}).Connect(context.Background())
	var he *wstransport.HandshakeError
	if !asHandshake(err, &he) || he.Status != http.StatusForbidden {
		t.Fatalf("err = %v, want a HandshakeError with 403", err)
	}
}

func asHandshake(err error, he **wstransport.HandshakeError) bool {
	e, ok := err.(*wstransport.HandshakeError)
	if ok {
		*he = e
	}
	return ok
}

func TestMalformedMessage(t *testing.T) {
	done := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"mcp"}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		_ = c.Write(r.Context(), websocket.MessageText, []byte("not json-rpc"))
		<-done
	}))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := (&wstransport.ClientTransport{URL: hs.URL}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	defer close(done) // runs first: the server closes its side
	_, err = conn.Read(ctx)
	if err == nil || !strings.Contains(err.Error(), "malformed JSON-RPC message") {
		t.Fatalf("err = %v", err)
	}
}
