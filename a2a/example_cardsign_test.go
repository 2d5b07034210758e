package a2a_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/switchboard-dev/switchboard/a2a"
	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// Sign the served card, and accept a peer only when its card verifies
// with a trusted key.
func ExampleCardTrust() {
	ctx := context.Background()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	worker, _ := agent.New(ctx, agent.Config{Name: "worker", Model: llm.NewCyclic(llm.Say("done"))})
	srv, _ := a2a.NewServer(ctx, a2a.ServerConfig{Agent: worker,
		CardKey: &a2a.CardKey{Key: key, KeyID: "2026-12"}})
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()

	trusted := &a2a.CardTrust{Keys: map[string]crypto.PublicKey{"2026-12": &key.PublicKey}}
	peers, err := a2a.NewToolset(ctx, a2a.ToolsetConfig{CardTrust: trusted,
		Peers: []a2a.Peer{{Name: "worker", URL: hs.URL}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer peers.Close()
	fmt.Println("trusted key: accepted")

	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, err = a2a.NewToolset(ctx, a2a.ToolsetConfig{
		CardTrust: &a2a.CardTrust{Keys: map[string]crypto.PublicKey{"2026-12": &other.PublicKey}},
		Peers:     []a2a.Peer{{Name: "worker", URL: hs.URL}}})
	fmt.Println("another key: refused:", errors.Is(err, failure.PermissionDenied))
	// Output:
	// trusted key: accepted
	// another key: refused: true
}
