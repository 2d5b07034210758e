// Package grpc serves an [a2a.Server] over the A2A gRPC binding and lets an
// [a2a.Toolset] reach peers over it, through a2a-go's a2agrpc. It is its
// own package so that a program that does not import it links no gRPC
// binding. Import it under another name than google.golang.org/grpc:
//
//	import a2agrpc "github.com/switchboard-dev/switchboard/a2a/grpc"
//
//	srv, _ := a2a.NewServer(ctx, a2a.ServerConfig{Agent: ag, GRPCURL: "grpc.example.com:443"})
//	gs := grpc.NewServer(append(a2agrpc.ServerOptions(srv), grpc.Creds(creds))...)
//	if err := a2agrpc.Register(gs, srv, nil); err != nil { ... }
//	go gs.Serve(lis)
//
//	peers, _ := a2a.NewToolset(ctx, a2a.ToolsetConfig{Peers: ps,
//	    ClientOptions: []a2aclient.FactoryOption{a2agrpc.ClientOption(grpc.WithTransportCredentials(creds))}})
package grpc

import (
	"context"
	"errors"
	"iter"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/switchboard-dev/switchboard/a2a"
	"github.com/switchboard-dev/switchboard/failure"
)

// Options configure [Register]; nil means defaults.
type Options struct {
	// Authenticated says that gs authenticates its callers itself (in its
	// interceptors), as it must for a server with ServerConfig.Auth: the
	// server's Auth is HTTP middleware, which the gRPC binding does not
	// run. Set Caller too, so that the server knows who they authenticated.
	Authenticated bool
	// Caller, if set, names the caller that gs's interceptors
	// authenticated, from the context they hand on (ok false: none). That
	// caller is the request's a2a.Caller, as Auth's is over HTTP: the task
	// store keeps its tasks apart from other callers', and
	// ServerConfig.MaxTasksPerCaller counts its tasks together with those
	// it runs over HTTP under the same name. Without a caller, a client is
	// its IPv4 address or IPv6 /64 (from the gRPC peer), as over HTTP
	// without Auth.
	Caller func(ctx context.Context) (caller string, ok bool)
}

// ServerOptions are the options to build gs with (grpc.NewServer) so that
// srv's size bound holds before a message is decoded: grpc.MaxRecvMsgSize
// set to ServerConfig.MaxRequestBytes, so that gRPC refuses a larger
// message (code ResourceExhausted) without allocating it, and accepts one
// up to the bound when that is larger than gRPC's default of 4 MiB.
// Without them Register still refuses a larger message, once gRPC has
// decoded it under gs's own limit.
func ServerOptions(srv *a2a.Server) []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(recvLimit(srv))}
}

// recvLimit is srv's MaxRequestBytes as a gRPC message size.
func recvLimit(srv *a2a.Server) int {
	if n := srv.Config().MaxRequestBytes; n > 0 && n < int64(int(^uint(0)>>1)) {
		return int(n)
	}
	return int(^uint(0) >> 1)
}

// Register serves srv's tasks on gs (the A2A 1.0 gRPC service), with the
// bounds srv has over HTTP: a request message larger than
// ServerConfig.MaxRequestBytes, or whose JSON form nests deeper than
// a2a.MaxRequestDepth or holds more than a2a.MaxRequestValues values, is
// refused (code ResourceExhausted), and MaxTasks and MaxTasksPerCaller
// count its tasks, per caller
// (Options.Caller) or else per client address, together with those of
// the same callers over JSON-RPC and HTTP+JSON; a message past them is
// refused with code ResourceExhausted too (a2a.ErrTaskBound; a2a-go
// would give Internal). The server's card names
// the gRPC interface when ServerConfig.GRPCURL is set.
//
// A server with ServerConfig.Auth is refused (a failure of kind Config)
// unless opts.Authenticated says gs authenticates callers itself: over
// gRPC, Auth would not apply and anyone reaching the port could start
// tasks.
func Register(gs *grpc.Server, srv *a2a.Server, opts *Options) error {
	if opts == nil {
		opts = &Options{}
	}
	if srv.Config().Auth != nil && !opts.Authenticated {
		return failure.New(failure.Config, failure.SourceA2A,
			"a2a/grpc: the server has Auth, which the gRPC binding does not apply; authenticate in gs's interceptors and set Options.Authenticated")
	}
	b := &binding{limit: recvLimit(srv), caller: opts.Caller}
	gs.RegisterService(b.desc(&a2apb.A2AService_ServiceDesc), a2agrpcv1.NewHandler(boundHandler{srv.RequestHandler()}))
	return nil
}

// binding applies a server's bounds to the A2A service's methods: the
// size of the request message, and the caller (or client address) that
// the task bounds count.
type binding struct {
	limit  int
	caller func(context.Context) (string, bool)
}

// desc is sd with each method's handler wrapped: the request message is
// checked against the bounds once decoded, and the context reaching the
// service (inside gs's interceptors, which authenticate) names the caller
// and the client's address.
func (b *binding) desc(sd *grpc.ServiceDesc) *grpc.ServiceDesc {
	out := *sd
	out.Methods = make([]grpc.MethodDesc, len(sd.Methods))
	for i, m := range sd.Methods {
		h := m.Handler
		m.Handler = func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			checked := func(v any) error {
				if err := dec(v); err != nil {
					return err
				}
				return b.check(v)
			}
			inner := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
				last := func(ctx context.Context, req any) (any, error) { return next(b.callContext(ctx), req) }
				if ic == nil {
					return last(ctx, req)
				}
				return ic(ctx, req, info, last)
			}
			return h(srv, ctx, checked, inner)
		}
		out.Methods[i] = m
	}
	out.Streams = make([]grpc.StreamDesc, len(sd.Streams))
	for i, s := range sd.Streams {
		h := s.Handler
		s.Handler = func(srv any, ss grpc.ServerStream) error {
			return h(srv, &boundStream{ServerStream: ss, b: b, ctx: b.callContext(ss.Context())})
		}
		out.Streams[i] = s
	}
	return &out
}

// check refuses a request message larger than the limit (gs received it
// under a larger MaxRecvMsgSize than ServerOptions gives), or whose JSON
// form passes the bounds on a request's JSON over HTTP
// (a2a.MaxRequestDepth, a2a.MaxRequestValues).
func (b *binding) check(v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return nil
	}
	if n := proto.Size(m); n > b.limit {
		return status.Errorf(codes.ResourceExhausted,
			"a2a/grpc: the request message is %d bytes, larger than the server's limit of %d bytes (ServerConfig.MaxRequestBytes)", n, b.limit)
	}
	if err := checkShape(m.ProtoReflect()); err != nil {
		return status.Errorf(codes.ResourceExhausted, "a2a/grpc: the request message is refused: %v", err)
	}
	return nil
}

// callContext names, in ctx, the caller Options.Caller finds there and
// the gRPC peer's address: who the task bounds count.
func (b *binding) callContext(ctx context.Context) context.Context {
	if b.caller != nil {
		if c, ok := b.caller(ctx); ok && c != "" {
			ctx = a2a.WithCaller(ctx, c)
		}
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		ctx = a2a.WithRemoteAddr(ctx, p.Addr.String())
	}
	return ctx
}

// boundStream is a server stream whose context names the caller and
// whose received messages are checked against the limit.
type boundStream struct {
	grpc.ServerStream
	b   *binding
	ctx context.Context
}

func (s *boundStream) Context() context.Context { return s.ctx }

func (s *boundStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return s.b.check(m)
}

// ClientOption lets a Toolset dial peers whose card offers the gRPC
// binding (ToolsetConfig.ClientOptions), with opts (credentials).
func ClientOption(opts ...grpc.DialOption) a2aclient.FactoryOption {
	return a2agrpcv1.WithGRPCTransport(opts...)
}

// boundHandler is a server's request handler whose refusal of a message
// past a task bound (a2a.ErrTaskBound) is a gRPC status of code
// ResourceExhausted, as a refused message's size is, rather than the
// Internal that a2a-go gives a server error.
type boundHandler struct{ a2asrv.RequestHandler }

func (h boundHandler) SendMessage(ctx context.Context, req *a2ago.SendMessageRequest) (a2ago.SendMessageResult, error) {
	res, err := h.RequestHandler.SendMessage(ctx, req)
	return res, taskBoundStatus(err)
}

func (h boundHandler) SendStreamingMessage(ctx context.Context, req *a2ago.SendMessageRequest) iter.Seq2[a2ago.Event, error] {
	return func(yield func(a2ago.Event, error) bool) {
		for ev, err := range h.RequestHandler.SendStreamingMessage(ctx, req) {
			if !yield(ev, taskBoundStatus(err)) {
				return
			}
		}
	}
}

// taskBoundStatus is err, or for a refusal past a task bound the gRPC
// status a2a-go would give it (its message, the ErrorInfo of an A2A server
// error) with the code ResourceExhausted.
func taskBoundStatus(err error) error {
	if err == nil || !errors.Is(err, a2a.ErrTaskBound) {
		return err
	}
	st := status.New(codes.ResourceExhausted, err.Error())
	if d, derr := st.WithDetails(&errdetails.ErrorInfo{Reason: a2ago.ErrorReason(a2ago.ErrServerError), Domain: a2ago.ProtocolDomain}); derr == nil {
		st = d
	}
	return st.Err()
}
