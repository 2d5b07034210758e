// Package grpc serves an [a2a.Server] over the A2A gRPC binding and lets an
// [a2a.Toolset] reach peers over it, through a2a-go's a2agrpc. It is its
// own package so that a program that does not import it links no gRPC
// binding. Import it under another name than google.golang.org/grpc:
//
//	import a2agrpc "github.com/switchboard-dev/switchboard/a2a/grpc"
//
//	srv, _ := a2a.NewServer(ctx, a2a.ServerConfig{Agent: ag, GRPCURL: "grpc.example.com:443"})
//	gs := grpc.NewServer()
//	if err := a2agrpc.Register(gs, srv, nil); err != nil { ... }
//	go gs.Serve(lis)
//
//	peers, _ := a2a.NewToolset(ctx, a2a.ToolsetConfig{Peers: ps,
//	    ClientOptions: []a2aclient.FactoryOption{a2agrpc.ClientOption(grpc.WithTransportCredentials(creds))}})
package grpc

import (
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"

	"github.com/switchboard-dev/switchboard/a2a"
	"github.com/switchboard-dev/switchboard/failure"
)

// Options configure [Register]; nil means defaults.
type Options struct {
	// Authenticated says that gs authenticates its callers itself (in its
	// interceptors), as it must for a server with ServerConfig.Auth: the
	// server's Auth is HTTP middleware, which the gRPC binding does not
	// run.
	Authenticated bool
}

// Register serves srv's tasks on gs (the A2A 1.0 gRPC service). The
// server's card names the gRPC interface when ServerConfig.GRPCURL is set.
// A server with ServerConfig.Auth is refused (a failure of kind Config)
// unless opts.Authenticated says gs authenticates callers itself: over
// gRPC, Auth would not apply and anyone reaching the port could start
// tasks.
func Register(gs *grpc.Server, srv *a2a.Server, opts *Options) error {
	if srv.Config().Auth != nil && (opts == nil || !opts.Authenticated) {
		return failure.New(failure.Config, failure.SourceA2A,
			"a2a/grpc: the server has Auth, which the gRPC binding does not apply; authenticate in gs's interceptors and set Options.Authenticated")
	}
	a2agrpcv1.NewHandler(srv.RequestHandler()).RegisterWith(gs)
	return nil
}

// ClientOption lets a Toolset dial peers whose card offers the gRPC
// binding (ToolsetConfig.ClientOptions), with opts (credentials).
func ClientOption(opts ...grpc.DialOption) a2aclient.FactoryOption {
	return a2agrpcv1.WithGRPCTransport(opts...)
}
