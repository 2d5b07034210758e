package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/mcp/internal/wstransport"
)

// connect makes one connection attempt through the failure policy, with the
// discovery fallback for stdio and WebSocket servers.
func (s *server) connect(ctx context.Context) (*gomcp.ClientSession, *attempt, error) {
	var sess *gomcp.ClientSession
	var att *attempt
	err := s.m.pol().Execute(ctx, s.key, func(ctx context.Context) error {
		select {
		case s.m.sem <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		defer func() { <-s.m.sem }()
		var err error
		sess, att, err = s.connectOnce(ctx)
		return err
	})
	return sess, att, err
}

func (s *server) connectOnce(ctx context.Context) (*gomcp.ClientSession, *attempt, error) {
	startup := s.startupTimeout()
	s.mu.Lock()
	pinned := s.protocol
	s.mu.Unlock()
	probe := pinned == "" && (s.cfg.Type == typeStdio || s.cfg.Type == typeWS) && s.m.cfg.DiscoveryTimeout < startup
	if probe {
		sess, att, err := s.dial(ctx, s.m.cfg.DiscoveryTimeout, "")
		if err == nil {
			return sess, att, nil
		}
		if !errors.Is(err, failure.Timeout) {
			return nil, nil, err
		}
		s.log.Info().Dur("after", s.m.cfg.DiscoveryTimeout).Msg("no answer to server/discover; retrying with the initialize handshake of " + legacyProtocol)
		pinned = legacyProtocol
		startup -= s.m.cfg.DiscoveryTimeout
	}
	sess, att, err := s.dial(ctx, startup, pinned)
	if err == nil && probe {
		s.mu.Lock()
		s.protocol = legacyProtocol
		s.mu.Unlock()
	}
	return sess, att, err
}

// dial starts a transport and runs the handshake within timeout.
func (s *server) dial(ctx context.Context, timeout time.Duration, version string) (*gomcp.ClientSession, *attempt, error) {
	att, err := s.newTransport(ctx)
	if err != nil {
		return nil, nil, err
	}
	// The context given to Connect must outlive the handshake: some
	// transports (legacy SSE) tie the connection's lifetime to it. So the
	// startup timeout cancels it only while the handshake runs, and the
	// session's teardown cancels it afterwards.
	cctx, cancel := context.WithCancel(ctx)
	timedOut := make(chan struct{})
	timer := s.handshakeTimer(timeout, func() { close(timedOut); cancel() })
	var opts *gomcp.ClientSessionOptions
	if version != "" {
		opts = &gomcp.ClientSessionOptions{ProtocolVersion: version}
	}
	sess, err := s.client.Connect(cctx, att.t, opts)
	if err == nil && !timer.Stop() {
		_ = sess.Close()
		err = context.DeadlineExceeded
	}
	if err != nil {
		timer.Stop()
		cancel()
		if att.cleanup != nil {
			att.cleanup()
		}
		select {
		case <-timedOut:
			return nil, nil, s.connectErr(ctx, err, true, timeout)
		default:
		}
		return nil, nil, s.connectErr(ctx, err, false, timeout)
	}
	prev := att.cleanup
	att.cleanup = func() {
		cancel()
		if prev != nil {
			prev()
		}
	}
	return sess, att, nil
}

func (s *server) connectErr(ctx context.Context, err error, timedOut bool, timeout time.Duration) error {
	fe := &failure.Error{Source: failure.SourceMCP, Name: s.cfg.Name, Op: "connect", Err: err}
	var se *json.SyntaxError
	var ee *exec.Error
	var hs *wstransport.HandshakeError
	var ae *failure.Error
	switch {
	case ctx.Err() != nil:
		fe.Kind = failure.Canceled
	case errors.As(err, &ae) && ae.Op == "authorize":
		fe.Kind, fe.Op, fe.Message = ae.Kind, ae.Op, ae.Message
	case timedOut:
		fe.Kind = failure.Timeout
		fe.Message = fmt.Sprintf("the server did not complete the MCP handshake within %s", timeout)
	case errors.As(err, &ee):
		fe.Kind = failure.Config
		fe.Message = fmt.Sprintf("cannot start %q: %v", s.cfg.Command, ee.Err)
	case errors.As(err, &hs) && (hs.Status == http.StatusUnauthorized || hs.Status == http.StatusForbidden),
		strings.Contains(err.Error(), http.StatusText(http.StatusUnauthorized)), strings.Contains(err.Error(), http.StatusText(http.StatusForbidden)):
		fe.Kind = failure.PermissionDenied
		fe.Message = authRefusedMessage(s.cfg)
	case errors.Is(err, failure.Protocol), errors.As(err, &se), strings.Contains(err.Error(), "invalid character"), strings.Contains(err.Error(), "unsupported protocol version"):
		fe.Kind = failure.Protocol
		fe.Message = "the server broke the MCP protocol during the handshake"
	default:
		fe.Kind = failure.From(err).Kind
		if fe.Kind == failure.Unknown {
			fe.Kind = failure.Unavailable
		}
		fe.Message = "cannot connect to the server"
	}
	fe.Retryable = fe.Kind == failure.Transient
	return fe
}
