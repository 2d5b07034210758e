// Package wstransport carries MCP over WebSocket for the official Go SDK
// (github.com/modelcontextprotocol/go-sdk), which has no WebSocket
// transport. Each JSON-RPC message is one WebSocket text message; the
// subprotocol is "mcp".
//
// ClientTransport dials a server; NewHandler serves a go-sdk *mcp.Server to
// WebSocket clients. One message is at most 16 MiB unless a ReadLimit says
// otherwise.
package wstransport

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// subprotocol is the WebSocket subprotocol MCP uses.
const subprotocol = "mcp"

// defaultReadLimit bounds one message (16 MiB, as go-sdk's stdio transport).
const defaultReadLimit = 16 << 20

// ClientTransport is a go-sdk mcp.Transport that dials a WebSocket server.
type ClientTransport struct {
	// URL is the server's ws://, wss://, http:// or https:// URL.
	URL string
	// Header is sent with the opening handshake (Authorization, ...).
	Header http.Header
	// HTTPClient dials (nil: http.DefaultClient).
	HTTPClient *http.Client
	// ReadLimit bounds one incoming message (0: 16 MiB).
	ReadLimit int64
}

// Connect dials the server.
func (t *ClientTransport) Connect(ctx context.Context) (gomcp.Connection, error) {
	u := t.URL
	switch {
	case strings.HasPrefix(u, "ws://"):
		u = "http://" + strings.TrimPrefix(u, "ws://")
	case strings.HasPrefix(u, "wss://"):
		u = "https://" + strings.TrimPrefix(u, "wss://")
	}
	c, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{
		HTTPClient: t.HTTPClient, HTTPHeader: t.Header, Subprotocols: []string{subprotocol},
	})
	if err != nil {
		if resp != nil {
			return nil, &HandshakeError{Status: resp.StatusCode, Err: err}
		}
		return nil, err
	}
	return newConn(c, t.ReadLimit), nil
}

// HandshakeError is a failed opening handshake with the HTTP status the
// server answered.
type HandshakeError struct {
	Status int
	Err    error
}

// Error describes the failed handshake.
func (e *HandshakeError) Error() string {
	return fmt.Sprintf("websocket handshake failed with HTTP %d: %v", e.Status, e.Err)
}

// Unwrap returns the cause.
func (e *HandshakeError) Unwrap() error { return e.Err }

// conn is a go-sdk mcp.Connection over one WebSocket connection.
type conn struct {
	c         *websocket.Conn
	closeOnce sync.Once
	closeErr  error
}

// newConn adapts an open WebSocket connection. readLimit bounds one
// message (0: defaultReadLimit).
func newConn(c *websocket.Conn, readLimit int64) *conn {
	if readLimit <= 0 {
		readLimit = defaultReadLimit
	}
	c.SetReadLimit(readLimit)
	return &conn{c: c}
}

// Read reads the next JSON-RPC message.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		typ, data, err := c.c.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) == websocket.StatusNormalClosure || websocket.CloseStatus(err) == websocket.StatusGoingAway {
				return nil, fmt.Errorf("websocket closed by peer: %w", io.EOF)
			}
			return nil, err
		}
		if typ != websocket.MessageText && typ != websocket.MessageBinary {
			continue
		}
		msg, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			return nil, fmt.Errorf("malformed JSON-RPC message on websocket: %w", err)
		}
		return msg, nil
	}
}

// Write writes one JSON-RPC message.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.c.Write(ctx, websocket.MessageText, data)
}

// Close closes the connection with a normal closure (once).
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		// The close handshake, then the network connection in any case: a
		// handshake that ends in an error (the peer's own close frame
		// among them) must still unblock a Read waiting for the next frame.
		_ = c.c.Close(websocket.StatusNormalClosure, "")
		_ = c.c.CloseNow()
		c.closeErr = nil
	})
	return c.closeErr
}

// SessionID is empty: a WebSocket connection is its own session.
func (c *conn) SessionID() string { return "" }

// handler serves MCP over WebSocket: every accepted connection gets the
// server getServer returns, until the connection closes.
type handler struct {
	getServer func(*http.Request) *gomcp.Server
	opts      HandlerOptions
}

// HandlerOptions tunes the handler of NewHandler.
type HandlerOptions struct {
	// OriginPatterns are the cross-origin hosts allowed (see
	// websocket.AcceptOptions).
	OriginPatterns []string
	// ReadLimit bounds one incoming message (0: 16 MiB).
	ReadLimit int64
}

// NewHandler returns an http.Handler serving getServer's servers over
// WebSocket (subprotocol "mcp"): every accepted connection gets the server
// getServer returns for its request (nil: 404) until the connection closes
// or the request's context is done. opts may be nil.
func NewHandler(getServer func(*http.Request) *gomcp.Server, opts *HandlerOptions) http.Handler {
	h := &handler{getServer: getServer}
	if opts != nil {
		h.opts = *opts
	}
	return h
}

// ServeHTTP accepts the connection and runs the MCP session on it; it
// returns when the session ends or the request's context is done.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	srv := h.getServer(r)
	if srv == nil {
		http.Error(w, "no MCP server", http.StatusNotFound)
		return
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{subprotocol}, OriginPatterns: h.opts.OriginPatterns})
	if err != nil {
		return // Accept has answered
	}
	wc := newConn(c, h.opts.ReadLimit)
	ss, err := srv.Connect(r.Context(), connTransport{wc}, nil)
	if err != nil {
		_ = wc.Close()
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ss.Wait()
	}()
	select {
	case <-done:
	case <-r.Context().Done():
		_ = ss.Close()
		<-done
	}
}

// connTransport hands an existing conn to go-sdk.
type connTransport struct{ c *conn }

func (t connTransport) Connect(context.Context) (gomcp.Connection, error) { return t.c, nil }
