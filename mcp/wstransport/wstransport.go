// Package wstransport carries MCP over WebSocket for the official Go SDK
// (github.com/modelcontextprotocol/go-sdk), which has no WebSocket
// transport. Each JSON-RPC message is one WebSocket text message; the
// subprotocol is "mcp".
//
// ClientTransport dials a server; Handler serves a go-sdk *mcp.Server to
// WebSocket clients; Conn adapts an already-open *websocket.Conn.
package wstransport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Subprotocol is the WebSocket subprotocol MCP uses.
const Subprotocol = "mcp"

// DefaultReadLimit bounds one message (16 MiB, as go-sdk's stdio transport).
const DefaultReadLimit = 16 << 20

// ClientTransport is a go-sdk mcp.Transport that dials a WebSocket server.
type ClientTransport struct {
	// URL is the server's ws://, wss://, http:// or https:// URL.
	URL string
	// Header is sent with the opening handshake (Authorization, ...).
	Header http.Header
	// HTTPClient dials (nil: http.DefaultClient).
	HTTPClient *http.Client
	// ReadLimit bounds one incoming message (0: DefaultReadLimit).
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
		HTTPClient: t.HTTPClient, HTTPHeader: t.Header, Subprotocols: []string{Subprotocol},
	})
	if err != nil {
		if resp != nil {
			return nil, &HandshakeError{Status: resp.StatusCode, Err: err}
		}
		return nil, err
	}
	return NewConn(c, t.ReadLimit), nil
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

// Conn is a go-sdk mcp.Connection over one WebSocket connection.
type Conn struct {
	c         *websocket.Conn
	closeOnce sync.Once
	closeErr  error
}

// NewConn adapts an open WebSocket connection. readLimit bounds one
// message (0: DefaultReadLimit).
func NewConn(c *websocket.Conn, readLimit int64) *Conn {
	if readLimit <= 0 {
		readLimit = DefaultReadLimit
	}
	c.SetReadLimit(readLimit)
	return &Conn{c: c}
}

// Read reads the next JSON-RPC message.
func (c *Conn) Read(ctx context.Context) (jsonrpc.Message, error) {
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
func (c *Conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.c.Write(ctx, websocket.MessageText, data)
}

// Close closes the connection with a normal closure (once).
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		err := c.c.Close(websocket.StatusNormalClosure, "")
		if err != nil && websocket.CloseStatus(err) == -1 && !errors.Is(err, net.ErrClosed) {
			_ = c.c.CloseNow()
		}
		c.closeErr = nil
	})
	return c.closeErr
}

// SessionID is empty: a WebSocket connection is its own session.
func (c *Conn) SessionID() string { return "" }

// Handler serves MCP over WebSocket: every accepted connection gets the
// server getServer returns, until the connection closes.
type Handler struct {
	getServer func(*http.Request) *gomcp.Server
	opts      HandlerOptions
}

// HandlerOptions tunes a Handler.
type HandlerOptions struct {
	// OriginPatterns are the cross-origin hosts allowed (see
	// websocket.AcceptOptions).
	OriginPatterns []string
	// ReadLimit bounds one incoming message (0: DefaultReadLimit).
	ReadLimit int64
}

// NewHandler returns an http.Handler serving getServer's servers over
// WebSocket.
func NewHandler(getServer func(*http.Request) *gomcp.Server, opts *HandlerOptions) *Handler {
	h := &Handler{getServer: getServer}
	if opts != nil {
		h.opts = *opts
	}
	return h
}

// ServeHTTP accepts the connection and runs the MCP session on it; it
// returns when the session ends or the request's context is done.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	srv := h.getServer(r)
	if srv == nil {
		http.Error(w, "no MCP server", http.StatusNotFound)
		return
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}, OriginPatterns: h.opts.OriginPatterns})
	if err != nil {
		return // Accept has answered
	}
	conn := NewConn(c, h.opts.ReadLimit)
	ss, err := srv.Connect(r.Context(), connTransport{conn}, nil)
	if err != nil {
		_ = conn.Close()
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

// connTransport hands an existing Conn to go-sdk.
type connTransport struct{ c *Conn }

func (t connTransport) Connect(context.Context) (gomcp.Connection, error) { return t.c, nil }

// Transport returns a go-sdk mcp.Transport over an already-open Conn (for
// servers that accept connections themselves).
func Transport(c *Conn) gomcp.Transport { return connTransport{c} }
