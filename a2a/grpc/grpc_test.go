package grpc_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/switchboard-dev/switchboard/a2a"
	a2agrpc "github.com/switchboard-dev/switchboard/a2a/grpc"
	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestOurClientOverGRPC: our toolset delegates to our server over the
// gRPC binding only (the card offers nothing else), streaming and not.
func TestOurClientOverGRPC(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	worker, err := agent.New(ctx, agent.Config{Name: "worker", Description: "Answers.",
		Model: llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
			return llm.Say("over grpc: " + strings.ToUpper(req.Messages[len(req.Messages)-1].Text))
		}))})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := a2a.NewServer(ctx, a2a.ServerConfig{Agent: worker, GRPCURL: lis.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	gs := grpc.NewServer()
	if err := a2agrpc.Register(gs, srv, nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- gs.Serve(lis) }()
	defer func() { gs.Stop(); <-done }()

	card := srv.Card(ctx, "http://127.0.0.1:1") // HTTP interfaces dropped below
	var grpcOnly []*a2ago.AgentInterface
	for _, in := range card.SupportedInterfaces {
		if in.ProtocolBinding == a2ago.TransportProtocolGRPC {
			grpcOnly = append(grpcOnly, in)
		}
	}
	if len(grpcOnly) != 1 {
		t.Fatalf("card interfaces %+v: want one GRPC", card.SupportedInterfaces)
	}
	card.SupportedInterfaces = grpcOnly
	for _, noStream := range []bool{false, true} {
		ts, err := a2a.NewToolset(ctx, a2a.ToolsetConfig{
			ClientOptions: []a2aclient.FactoryOption{a2agrpc.ClientOption(grpc.WithTransportCredentials(insecure.NewCredentials()))},
			Peers:         []a2a.Peer{{Name: "worker", Card: card, NoStreaming: noStream}}})
		if err != nil {
			t.Fatal(err)
		}
		tools, _ := ts.Tools(ctx)
		res, err := tools[0].Call(ctx, []byte(`{"message":"hello"}`))
		if err != nil || !strings.Contains(res.Text(), "over grpc: HELLO") {
			t.Fatalf("no streaming %v: %v, %v", noStream, res, err)
		}
		_ = ts.Close()
	}
}

// TestRegisterRefusesUnappliedAuth: a server with Auth is not served over
// gRPC, where its Auth would not run, unless the gRPC server says it
// authenticates callers itself.
func TestRegisterRefusesUnappliedAuth(t *testing.T) {
	ctx := context.Background()
	worker, err := agent.New(ctx, agent.Config{Name: "worker", Model: llm.NewCyclic(llm.Say("ok"))})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := a2a.NewServer(ctx, a2a.ServerConfig{Agent: worker, Auth: &a2a.Auth{BearerTokens: map[string]string{"t0ken-0123456789abcdef": "alice"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tests := []struct {
		opts    *a2agrpc.Options
		wantErr bool
	}{
		{nil, true},
		{&a2agrpc.Options{}, true},
		{&a2agrpc.Options{Authenticated: true}, false},
	}
	for _, tt := range tests {
		gs := grpc.NewServer()
		err := a2agrpc.Register(gs, srv, tt.opts)
		var fe *failure.Error
		if tt.wantErr != (err != nil) || (err != nil && (!errors.As(err, &fe) || fe.Kind != failure.Config)) {
			t.Errorf("Register(%+v): %v; want error %v", tt.opts, err, tt.wantErr)
		}
		gs.Stop()
	}
}
