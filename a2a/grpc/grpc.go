// Package grpc serves an [a2a.Server] over the A2A gRPC binding and lets an
// [a2a.Toolset] reach peers over it, through a2a-go's a2agrpc. It is its
// own package so that a program that does not import it links no gRPC
// binding. Import it under another name than google.golang.org/grpc:
//
//	import a2agrpc "github.com/switchboard-dev/switchboard/a2a/grpc"
//
//	srv, _ := a2a.NewServer(ctx, a2a.ServerConfig{Agent: ag, GRPCURL: "grpc.example.com:443"})
//	gs := grpc.NewServer()
//	a2agrpc.Register(gs, srv)
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
)

// Register serves srv's tasks on gs (the A2A 1.0 gRPC service). The
// server's card names the gRPC interface when ServerConfig.GRPCURL is set.
func Register(gs *grpc.Server, srv *a2a.Server) {
	a2agrpcv1.NewHandler(srv.RequestHandler()).RegisterWith(gs)
}

// ClientOption lets a Toolset dial peers whose card offers the gRPC
// binding (ToolsetConfig.ClientOptions), with opts (credentials).
func ClientOption(opts ...grpc.DialOption) a2aclient.FactoryOption {
	return a2agrpcv1.WithGRPCTransport(opts...)
}
