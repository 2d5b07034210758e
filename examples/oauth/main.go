// Command oauth shows an MCP server that requires authorization (OAuth
// 2.1) reached through the mcp Manager, with the login going through the
// bus: the Manager's Elicitor is the bus's, so the authorization URL is
// published as a URL-mode elicitation and answered by whoever serves
// elicitations (here a "browser" responder that follows the URL, as a
// person would; in a real host, a terminal or a web page that shows it).
// The redirect comes back to the Manager's loopback listener, the tokens
// go to a JetStream bucket, encrypted, and a second Manager (another
// replica) uses the same login without asking again.
//
// Everything is local: an embedded NATS server, and a real authorization
// server (ory/fosite, in authserver.go) in front of an MCP server, on
// loopback ports. The example imports only public packages: copy it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/store"
	"github.com/switchboard-dev/switchboard/mcp"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "oauth:", err)
		os.Exit(1)
	}
}

// browser answers URL-mode elicitations by following the URL: the local
// authorization server logs the visitor in and redirects to the
// Manager's listener.
type browser struct{ logins int }

func (b *browser) Elicit(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
	if e.Kind != agent.ElicitURL {
		return agent.ElicitationResult{Action: agent.ElicitDecline}, nil
	}
	b.logins++
	fmt.Printf("person: %s (opening the authorization URL)\n", e.Message)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.URL+"&user=ada", nil)
	if err != nil {
		return agent.ElicitationResult{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return agent.ElicitationResult{}, err
	}
	resp.Body.Close()
	return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
}

// notes is what the example runs on: the notes MCP server behind its
// authorization server, the bus (with JetStream in dir) and the "browser"
// that answers its elicitations, and the key that seals the tokens.
type notes struct {
	as     *authServer
	b      *bus.Bus
	svc    io.Closer
	person *browser
	sealer *mcp.TokenSealer
}

// startNotes starts the authorization and MCP servers, the bus and the
// browser responder.
func startNotes(ctx context.Context, dir string) (n *notes, err error) {
	n = &notes{person: &browser{}}
	defer func() {
		if err != nil {
			n.Close()
		}
	}()
	srv := gomcp.NewServer(&gomcp.Implementation{Name: "notes", Version: "1"}, nil)
	gomcp.AddTool(srv, &gomcp.Tool{Name: "latest_note", Description: "The latest note."},
		func(context.Context, *gomcp.CallToolRequest, struct{}) (*gomcp.CallToolResult, any, error) {
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "buy milk"}}}, nil, nil
		})
	if n.as, err = startAuthServer(gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return srv }, nil)); err != nil {
		return nil, err
	}
	if n.b, err = bus.New(ctx, bus.Config{StoreDir: dir}); err != nil {
		return nil, err
	}
	if n.svc, err = n.b.ServeElicitation(ctx, n.person, bus.ServeOptions{MaxConcurrent: 1}); err != nil {
		return nil, err
	}
	// In a real host: a secret from its key store.
	if n.sealer, err = mcp.NewTokenSealer(bytes.Repeat([]byte{42}, 32)); err != nil {
		return nil, err
	}
	return n, nil
}

// manager is one replica's Manager: it reaches the notes server, logs in
// through the bus and keeps its tokens in the bus's sealed bucket.
func (n *notes) manager(ctx context.Context) (*mcp.Manager, error) {
	logins, err := store.OpenTokens(ctx, n.b, store.TokensConfig{Name: "mcp-logins", Sealer: n.sealer})
	if err != nil {
		return nil, err
	}
	return mcp.New(ctx, mcp.Config{
		Servers:    []mcp.ServerConfig{{Name: "notes", URL: n.as.Endpoint(), Auth: &mcp.Auth{ClientID: clientID}}},
		Elicitor:   n.b.Elicitor(),
		TokenStore: logins,
	})
}

// Close stops what startNotes started.
func (n *notes) Close() {
	if n.svc != nil {
		n.svc.Close()
	}
	if n.b != nil {
		n.b.Close()
	}
	if n.as != nil {
		n.as.Close()
	}
}

func run(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "oauth-example-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	n, err := startNotes(ctx, dir)
	if err != nil {
		return err
	}
	defer n.Close()

	replica := func(name string) error {
		m, err := n.manager(ctx)
		if err != nil {
			return err
		}
		defer m.Close()
		res, err := m.CallTool(ctx, "notes", "latest_note", json.RawMessage(`{}`))
		if err != nil {
			return err
		}
		fmt.Printf("%s: latest_note: %s\n", name, res.Text())
		return nil
	}
	if err := replica("replica 1"); err != nil {
		return err
	}
	if err := replica("replica 2"); err != nil {
		return err
	}
	fmt.Printf("logins asked of the person: %d; authorization code grants: %d\n", n.person.logins, n.as.Grants("authorization_code"))
	return nil
}
