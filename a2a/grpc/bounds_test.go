package grpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/switchboard-dev/switchboard/a2a"
	a2agrpc "github.com/switchboard-dev/switchboard/a2a/grpc"
	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// gatedRunner answers once gate is closed (or its run is cancelled), and
// at once when gate is nil.
type gatedRunner struct{ gate chan struct{} }

func (gatedRunner) Name() string        { return "gated" }
func (gatedRunner) Description() string { return "Answers when let through." }
func (g gatedRunner) Stream(ctx context.Context, input string) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		if g.gate != nil {
			select {
			case <-g.gate:
			case <-ctx.Done():
				yield(agent.Event{}, ctx.Err())
				return
			}
		}
		yield(agent.Event{Type: agent.EventFinal, Text: fmt.Sprintf("got %d bytes", len(input))}, nil)
	}
}

// served is a server on a loopback gRPC listener and on an HTTP one.
type served struct {
	srv      *a2a.Server
	grpcAddr string
	card     *a2ago.AgentCard // every interface: JSON-RPC, HTTP+JSON, gRPC
}

// serve starts cfg's server on 127.0.0.1 over gRPC (gs built with gopts,
// registered with opts) and HTTP; everything stops at the test's end.
func serve(t *testing.T, cfg a2a.ServerConfig, opts *a2agrpc.Options, gopts func(*a2a.Server) []grpc.ServerOption) *served {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.GRPCURL = lis.Addr().String()
	srv, err := a2a.NewServer(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var o []grpc.ServerOption
	if gopts != nil {
		o = gopts(srv)
	}
	gs := grpc.NewServer(o...)
	if err := a2agrpc.Register(gs, srv, opts); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- gs.Serve(lis) }()
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		gs.Stop()
		<-done
		hs.CloseClientConnections()
		hs.Close()
		_ = srv.Close()
	})
	return &served{srv: srv, grpcAddr: lis.Addr().String(), card: srv.Card(context.Background(), hs.URL)}
}

// apiKey sends an x-api-key with every gRPC call.
type apiKey string

func (k apiKey) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"x-api-key": string(k)}, nil
}
func (apiKey) RequireTransportSecurity() bool { return false }

// headerTransport sends an X-API-Key with every HTTP request.
type headerTransport string

func (k headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-API-Key", string(k))
	return http.DefaultTransport.RoundTrip(r)
}

// via is one client of a test: its binding and API key ("" none).
type via struct {
	binding a2ago.TransportProtocol
	key     string
}

var (
	grpcAnon = via{binding: a2ago.TransportProtocolGRPC}
	rpcAnon  = via{binding: a2ago.TransportProtocolJSONRPC}
)

func times(n int, v via) []via {
	out := make([]via, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// client is an a2a-go client of s over v's binding.
func (s *served) client(t *testing.T, v via) *a2aclient.Client {
	t.Helper()
	dial := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	hc := http.DefaultClient
	if v.key != "" {
		dial = append(dial, grpc.WithPerRPCCredentials(apiKey(v.key)))
		hc = &http.Client{Transport: headerTransport(v.key)}
	}
	c, err := a2aclient.NewFromCard(context.Background(), s.card,
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2ago.TransportProtocol{v.binding}}),
		a2aclient.WithJSONRPCTransport(hc), a2agrpc.ClientOption(dial...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// rawSend sends one message to s over gRPC with the API key ("" none)
// as a2apb's client, streaming or not, and returns the call's error (nil
// once the message is answered).
func (s *served) rawSend(ctx context.Context, t *testing.T, key string, stream bool) error {
	t.Helper()
	dial := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if key != "" {
		dial = append(dial, grpc.WithPerRPCCredentials(apiKey(key)))
	}
	conn, err := grpc.NewClient(s.grpcAddr, dial...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := a2apb.NewA2AServiceClient(conn)
	req := &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "raw", Role: a2apb.Role_ROLE_USER,
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "work"}}}},
		Configuration: &a2apb.SendMessageConfiguration{ReturnImmediately: true}}
	if !stream {
		_, err := c.SendMessage(ctx, req)
		return err
	}
	st, err := c.SendStreamingMessage(ctx, req)
	for err == nil {
		_, err = st.Recv()
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

type callerKey struct{}

// keyAuth is the authentication of a gRPC server (its interceptors): the
// x-api-key metadata names the caller in keys, else the call is refused.
func keyAuth(keys map[string]string) func(*a2a.Server) []grpc.ServerOption {
	auth := func(ctx context.Context) (context.Context, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		for _, k := range md.Get("x-api-key") {
			if c, ok := keys[k]; ok {
				return context.WithValue(ctx, callerKey{}, c), nil
			}
		}
		return nil, status.Error(codes.Unauthenticated, "no valid x-api-key")
	}
	return func(srv *a2a.Server) []grpc.ServerOption {
		return append(a2agrpc.ServerOptions(srv),
			grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
				ctx, err := auth(ctx)
				if err != nil {
					return nil, err
				}
				return next(ctx, req)
			}),
			grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, next grpc.StreamHandler) error {
				ctx, err := auth(ss.Context())
				if err != nil {
					return err
				}
				return next(srv, &ctxStream{ServerStream: ss, ctx: ctx})
			}))
	}
}

type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *ctxStream) Context() context.Context { return s.ctx }

// TestGRPCTaskBounds (issue 33, item 1): over gRPC a caller runs at most
// MaxTasksPerCaller tasks at once, as over HTTP: the caller is the one
// gs's interceptors authenticated (Options.Caller), else the client's
// address from the gRPC peer, and its tasks count together with those it
// runs over JSON-RPC. Past the bound a message is refused with the
// error naming it; once the tasks end their slots are free again.
func TestGRPCTaskBounds(t *testing.T) {
	keys := map[string]string{"ka": "ann", "kb": "bob"}
	ann, bob := via{a2ago.TransportProtocolGRPC, "ka"}, via{a2ago.TransportProtocolGRPC, "kb"}
	annRPC := via{a2ago.TransportProtocolJSONRPC, "ka"}
	tests := []struct {
		name     string
		cfg      a2a.ServerConfig
		opts     *a2agrpc.Options
		gopts    func(*a2a.Server) []grpc.ServerOption
		accepted []via // each starts one task, in order
		refused  []via // each is then refused
		refusal  string
	}{
		{name: "anonymous, default bound", cfg: a2a.ServerConfig{},
			accepted: times(16, grpcAnon), refused: []via{grpcAnon},
			refusal: "a caller may run at most 16 tasks at once on this server (ServerConfig.MaxTasksPerCaller)"},
		{name: "anonymous, counted with JSON-RPC", cfg: a2a.ServerConfig{MaxTasksPerCaller: 4},
			accepted: append(times(2, rpcAnon), times(2, grpcAnon)...), refused: []via{grpcAnon, rpcAnon},
			refusal: "at most 4 tasks at once"},
		{name: "authenticated callers", cfg: a2a.ServerConfig{MaxTasksPerCaller: 2, Auth: &a2a.Auth{APIKeys: keys}},
			opts: &a2agrpc.Options{Authenticated: true, Caller: func(ctx context.Context) (string, bool) {
				c, ok := ctx.Value(callerKey{}).(string)
				return c, ok
			}},
			gopts:    keyAuth(keys),
			accepted: []via{ann, annRPC, bob, bob}, refused: []via{ann, annRPC, bob},
			refusal: "at most 2 tasks at once"},
		{name: "per server", cfg: a2a.ServerConfig{MaxTasks: 3, MaxTasksPerCaller: -1},
			accepted: times(3, grpcAnon), refused: []via{grpcAnon, rpcAnon},
			refusal: "the server runs at most 3 tasks at once (ServerConfig.MaxTasks)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			gate := make(chan struct{})
			cfg := tt.cfg
			cfg.Agent = gatedRunner{gate: gate}
			s := serve(t, cfg, tt.opts, tt.gopts)
			clients := map[via]*a2aclient.Client{}
			clientOf := func(v via) *a2aclient.Client {
				if clients[v] == nil {
					clients[v] = s.client(t, v)
				}
				return clients[v]
			}
			start := func(v via) error {
				m := &a2ago.SendMessageRequest{Message: a2ago.NewMessage(a2ago.MessageRoleUser, a2ago.NewTextPart("work")),
					Config: &a2ago.SendMessageConfig{ReturnImmediately: true}}
				_, err := clientOf(v).SendMessage(ctx, m)
				return err
			}
			for i, v := range tt.accepted {
				if err := start(v); err != nil {
					t.Fatalf("task %d (%s %q), within the bound, was refused: %v", i+1, v.binding, v.key, err)
				}
			}
			for _, v := range tt.refused {
				err := start(v)
				if err == nil || !strings.Contains(err.Error(), tt.refusal) {
					t.Fatalf("%s %q past the bound: %v; want an error naming %q", v.binding, v.key, err, tt.refusal)
				}
				if v.binding != a2ago.TransportProtocolGRPC {
					if !errors.Is(err, a2ago.ErrServerError) {
						t.Fatalf("%s %q past the bound: %v; want the A2A server error", v.binding, v.key, err)
					}
					continue
				}
				// On the wire: ResourceExhausted, not a2a-go's Internal.
				for _, stream := range []bool{false, true} {
					err := s.rawSend(ctx, t, v.key, stream)
					if status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), tt.refusal) {
						t.Fatalf("gRPC %q past the bound (streaming %v): %v; want code ResourceExhausted naming %q", v.key, stream, err, tt.refusal)
					}
				}
			}
			close(gate) // the tasks end: their slots are free again
			v := tt.refused[0]
			testkit.WaitFor(t, 10*time.Second, "a task accepted once the others ended", func() bool { return start(v) == nil })
		})
	}
}

// nestedLists is a JSON value of depth arrays within each other.
func nestedLists(depth int) *structpb.Value {
	v := structpb.NewNumberValue(1)
	for range depth {
		v = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{v}})
	}
	return v
}

// numbers is a JSON array of n numbers.
func numbers(n int) *structpb.Value {
	l := &structpb.ListValue{Values: make([]*structpb.Value, n)}
	for i := range l.Values {
		l.Values[i] = structpb.NewNumberValue(float64(i))
	}
	return structpb.NewListValue(l)
}

// TestGRPCRequestBytes (issue 33, item 1): over gRPC a request message
// larger than ServerConfig.MaxRequestBytes is refused with
// ResourceExhausted, unary and streaming: by Register's check whatever
// gs's options (naming the bound), by gRPC itself when gs has
// ServerOptions, which also let a message up to a bound above gRPC's
// default 4 MiB through. A message whose JSON form nests deeper or holds
// more values than a request's JSON may over HTTP is refused likewise.
func TestGRPCRequestBytes(t *testing.T) {
	const ourRefusal = "larger than the server's limit of 65536 bytes (ServerConfig.MaxRequestBytes)"
	tests := []struct {
		name     string
		limit    int64
		gopts    func(*a2a.Server) []grpc.ServerOption
		stream   bool
		size     int             // of the text part
		data     *structpb.Value // a data part besides, if set
		wantCode codes.Code
		wantMsg  string
	}{
		{name: "data nested too deep", size: 1, data: nestedLists(70), wantCode: codes.ResourceExhausted,
			wantMsg: "nests deeper than 64 levels (a2a.MaxRequestDepth)"},
		{name: "data nested too deep, streaming", stream: true, size: 1, data: nestedLists(70), wantCode: codes.ResourceExhausted,
			wantMsg: "nests deeper than 64 levels (a2a.MaxRequestDepth)"},
		{name: "data nested within the bound", size: 1, data: nestedLists(50), wantCode: codes.OK},
		{name: "data of too many values", size: 1, data: numbers(100_001), wantCode: codes.ResourceExhausted,
			wantMsg: "holds more than 100000 values (a2a.MaxRequestValues)"},
		{name: "data of many values within the bound", size: 1, data: numbers(90_000), wantCode: codes.OK},
		{name: "over the bound, unary", limit: 64 << 10, size: 100 << 10, wantCode: codes.ResourceExhausted, wantMsg: ourRefusal},
		{name: "over the bound, streaming", limit: 64 << 10, stream: true, size: 100 << 10, wantCode: codes.ResourceExhausted, wantMsg: ourRefusal},
		{name: "within the bound", limit: 64 << 10, size: 60 << 10, wantCode: codes.OK},
		{name: "within the bound, streaming", limit: 64 << 10, stream: true, size: 60 << 10, wantCode: codes.OK},
		{name: "ServerOptions, over the bound", limit: 64 << 10, gopts: a2agrpc.ServerOptions, size: 100 << 10,
			wantCode: codes.ResourceExhausted, wantMsg: "grpc: received message larger than max"},
		{name: "ServerOptions, streaming, over the bound", limit: 64 << 10, gopts: a2agrpc.ServerOptions, stream: true, size: 100 << 10,
			wantCode: codes.ResourceExhausted, wantMsg: "grpc: received message larger than max"},
		{name: "ServerOptions, a bound above gRPC's default", limit: 8 << 20, gopts: a2agrpc.ServerOptions, size: 5 << 20, wantCode: codes.OK},
		{name: "default bound", size: 5 << 20, wantCode: codes.ResourceExhausted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s := serve(t, a2a.ServerConfig{Agent: gatedRunner{}, MaxRequestBytes: tt.limit}, nil, tt.gopts)
			conn, err := grpc.NewClient(s.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
				grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16<<20))) // the answer's task holds the message
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			c := a2apb.NewA2AServiceClient(conn)
			req := &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m1", Role: a2apb.Role_ROLE_USER,
				Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: strings.Repeat("x", tt.size)}}}}}
			if tt.data != nil {
				req.Message.Parts = append(req.Message.Parts, &a2apb.Part{Content: &a2apb.Part_Data{Data: tt.data}})
			}
			var answer string
			if tt.stream {
				st, err := c.SendStreamingMessage(ctx, req)
				for err == nil {
					var ev *a2apb.StreamResponse
					if ev, err = st.Recv(); err == nil {
						answer += ev.String()
					}
				}
				if errors.Is(err, io.EOF) {
					err = nil
				}
				if got := status.Code(err); got != tt.wantCode || !strings.Contains(status.Convert(err).Message(), tt.wantMsg) {
					t.Fatalf("streaming %d bytes: %v; want code %v naming %q", tt.size, err, tt.wantCode, tt.wantMsg)
				}
			} else {
				res, err := c.SendMessage(ctx, req)
				if got := status.Code(err); got != tt.wantCode || !strings.Contains(status.Convert(err).Message(), tt.wantMsg) {
					t.Fatalf("sending %d bytes: %v; want code %v naming %q", tt.size, err, tt.wantCode, tt.wantMsg)
				}
				answer = res.String()
			}
			if want := fmt.Sprintf("got %d bytes", tt.size); tt.wantCode == codes.OK && tt.data == nil && !strings.Contains(answer, want) {
				t.Fatalf("the agent's answer %.300q does not say %q", answer, want)
			}
		})
	}
}
