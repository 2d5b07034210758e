package mcp

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/mcp/internal/lineconn"
	"github.com/switchboard-dev/switchboard/mcp/internal/wstransport"
)

// attempt is one connection attempt's transport and what to clean up
// after its session ends.
type attempt struct {
	t       gomcp.Transport
	cleanup func()
	conn    *lineconn.Conn // the client's connection, when it is ours (set by Connect)
	notes   *noteQueue     // its queue of log and progress notifications
}

// newTransport builds a fresh transport for one connection attempt.
func (s *server) newTransport(ctx context.Context) (*attempt, error) {
	cfg := s.cfg
	switch cfg.Type {
	case typeStdio:
		cmd := exec.Command(cfg.Command, cfg.Args...)
		if len(cfg.Env) > 0 {
			env := os.Environ()
			for _, k := range sortedKeys(cfg.Env) {
				env = append(env, k+"="+cfg.Env[k])
			}
			cmd.Env = env
		}
		cmd.Dir = cfg.Cwd
		cmd.Stderr = &lineLogger{log: s.log, server: cfg.Name}
		setProcessGroup(cmd)
		a := &attempt{}
		a.t = idTransport{Transport: &stdioTransport{cmd: cmd, grace: s.m.cfg.ShutdownGrace, maxFrame: gomcp.DefaultMaxLineLength,
			notes: s.onNote, log: s.log, coalesce: &s.notes, onConn: func(c *lineconn.Conn, q *noteQueue) { a.conn, a.notes = c, q }},
			onTask: s.onTask, onNotice: s.notices.notify}
		a.cleanup = func() { killProcessGroup(cmd) }
		return a, nil
	case typeHTTP:
		t := &gomcp.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: s.httpClient()}
		h, err := s.oauthHandler()
		if err != nil {
			return nil, err
		}
		if h != nil {
			t.OAuthHandler = h
			c := *t.HTTPClient
			rt := c.Transport
			if rt == nil {
				rt = http.DefaultTransport
			}
			c.Transport = &authRT{base: rt, h: h}
			t.HTTPClient = &c
		}
		return &attempt{t: t}, nil
	case typeSSE:
		return &attempt{t: &gomcp.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: s.httpClient()}}, nil
	case typeWS:
		h := http.Header{}
		for k, v := range cfg.Headers {
			h.Set(k, v)
		}
		return &attempt{t: taskTransport{&wstransport.ClientTransport{URL: cfg.URL, Header: h, HTTPClient: s.m.cfg.HTTPClient}, s.onTask, s.notices.notify}}, nil
	case typeInProcess:
		if cfg.Server != nil {
			return s.pipeToServer(ctx)
		}
		if cfg.NewTransport != nil {
			t, err := cfg.NewTransport(ctx)
			if err != nil {
				return nil, &failure.Error{Kind: failure.Unavailable, Source: failure.SourceMCP, Name: cfg.Name, Op: "connect",
					Message: "the in-process server's transport could not be made", Err: err}
			}
			return &attempt{t: t}, nil
		}
		s.mu.Lock()
		used := s.inprocUsed
		s.inprocUsed = true
		s.mu.Unlock()
		if used {
			return nil, &failure.Error{Kind: failure.Unavailable, Source: failure.SourceMCP, Name: cfg.Name, Op: "connect",
				Message: "the in-process server's transport was closed and cannot be reconnected"}
		}
		return &attempt{t: cfg.Transport}, nil
	}
	return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceMCP, Name: cfg.Name, Message: "unknown transport type " + cfg.Type}
}

func (s *server) httpClient() *http.Client {
	base := s.m.cfg.HTTPClient
	if base == nil {
		base = http.DefaultClient
	}
	c := *base
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	if len(s.cfg.Headers) > 0 {
		rt = &headerRT{base: rt, headers: s.cfg.Headers}
	}
	if s.cfg.Type == typeHTTP {
		rt = taskRT{base: rt, onTask: s.onTask, onNotice: s.notices.notify}
	}
	c.Transport = traceRT{base: rt}
	return &c
}

// headerRT adds configured headers to every request.
type headerRT struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h *headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// lineLogger writes a stdio server's stderr to the log, one entry a line.
type lineLogger struct {
	log    zerolog.Logger
	server string
	mu     sync.Mutex
	buf    []byte
}

const maxStderrLine = 8 << 10

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			if len(l.buf) > maxStderrLine {
				l.emit(l.buf)
				l.buf = l.buf[:0]
			}
			return len(p), nil
		}
		l.emit(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
}

func (l *lineLogger) emit(line []byte) {
	line = bytes.TrimRight(line, "\r")
	if len(line) == 0 {
		return
	}
	if len(line) > maxStderrLine {
		line = line[:maxStderrLine]
	}
	l.log.Info().Str("stream", "stderr").Msg(string(line))
}

// pipeToServer connects the in-process server to one end of an in-memory
// pipe and returns a transport over the other end. The server's session
// ends when the client's end closes; cleanup also closes it.
func (s *server) pipeToServer(ctx context.Context) (*attempt, error) {
	clientEnd, serverEnd := net.Pipe()
	maxFrame := gomcp.DefaultMaxLineLength
	// Both ends read with mcp/internal/lineconn. The server's end never sees a batch:
	// the only client on the pipe is go-sdk's, which sends none.
	serverT := connTransport{newConn: func() gomcp.Connection {
		return lineconn.New(serverEnd, serverEnd, lineconn.Options{Close: serverEnd.Close, MaxFrame: maxFrame})
	}}
	ss, err := s.cfg.Server.Connect(ctx, serverT, nil)
	if err != nil {
		_ = clientEnd.Close()
		_ = serverEnd.Close()
		return nil, &failure.Error{Kind: failure.Unavailable, Source: failure.SourceMCP, Name: s.cfg.Name, Op: "connect",
			Message: "the in-process server did not accept a connection", Err: err}
	}
	a := &attempt{cleanup: func() { _ = clientEnd.Close(); _ = ss.Close() }}
	a.t = idTransport{connTransport{newConn: func() gomcp.Connection {
		q := newNoteQueue(s.log, s.onNote)
		c := newClientConn(clientEnd, clientEnd, lineconn.Options{Close: clientEnd.Close, MaxFrame: maxFrame},
			clientHooks{notes: q, coalesce: &s.notes})
		a.conn, a.notes = c, q
		return c
	}}, s.onTask, s.notices.notify}
	return a, nil
}

// connTransport is a Transport whose Connect returns a connection made
// by newConn.
type connTransport struct {
	newConn func() gomcp.Connection
}

func (t connTransport) Connect(context.Context) (gomcp.Connection, error) { return t.newConn(), nil }
