package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/failure"
)

// TestCallErrKinds: how a failed call's error is classified, for the
// errors go-sdk's client returns.
func TestCallErrKinds(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		kind      failure.Kind
		retryable bool
	}{
		{"session missing", fmt.Errorf("calling tools/call: %w", gomcp.ErrSessionMissing), failure.Unavailable, false},
		{"session missing under a closed connection", fmt.Errorf("%w: %v", gomcp.ErrConnectionClosed, gomcp.ErrSessionMissing), failure.Unavailable, false},
		{"connection closed", gomcp.ErrConnectionClosed, failure.Unavailable, false}, // the call may have run
		{"eof", io.EOF, failure.Unavailable, false},
		{"invalid params", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad"}, failure.InvalidArgs, false},
		{"unknown method", &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no"}, failure.UnknownTool, false},
		{"rejected by the transport", &jsonrpc.Error{Code: codeRejected, Message: "503"}, failure.Transient, true},
	}
	s := &server{cfg: ServerConfig{Name: "api"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.callErr(context.Background(), nil, tt.err, "mcp__api__echo", nil)
			var fe *failure.Error
			if !errors.As(err, &fe) {
				t.Fatalf("%v is not a *failure.Error", err)
			}
			if retryable := fe.Retryable || fe.Kind.Retryable(); fe.Kind != tt.kind || retryable != tt.retryable || fe.Name != "api" || fe.Tool != "mcp__api__echo" {
				t.Fatalf("%+v (retryable %v), want kind %v, retryable %v", fe, retryable, tt.kind, tt.retryable)
			}
		})
	}
}
