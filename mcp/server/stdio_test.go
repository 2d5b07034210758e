package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// stdioPeer is a raw JSON-RPC client of a Server run on an IOTransport
// over two OS pipes, as a gateway on stdio is.
type stdioPeer struct {
	in   *os.File // the server's input: the peer writes here
	out  *bufio.Reader
	done chan error // Run's result
}

// runOnPipes runs srv on an IOTransport of OS pipes (maxLine: its
// MaxLineLength) until the test ends.
func runOnPipes(t *testing.T, srv *server.Server, maxLine int) *stdioPeer {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &stdioPeer{in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() { p.done <- srv.Run(ctx, &gomcp.IOTransport{Reader: inR, Writer: outW, MaxLineLength: maxLine}) }()
	t.Cleanup(func() {
		cancel()
		_ = inW.Close()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after the client left")
		}
		_ = outR.Close()
	})
	return p
}

func (p *stdioPeer) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// recv reads one line (io.EOF once the server closed its output), at most
// 10 s.
func (p *stdioPeer) recv(t *testing.T) (string, error) {
	t.Helper()
	type got struct {
		line string
		err  error
	}
	ch := make(chan got, 1)
	go func() {
		l, err := p.out.ReadString('\n')
		ch <- got{l, err}
	}()
	select {
	case g := <-ch:
		return strings.TrimSpace(g.line), g.err
	case <-time.After(10 * time.Second):
		t.Fatal("no answer within 10 s")
		return "", nil
	}
}

// handshake initializes the session at protocol revision version.
func (p *stdioPeer) handshake(t *testing.T, version string) {
	t.Helper()
	p.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if line, err := p.recv(t); err != nil || !strings.Contains(line, `"protocolVersion":"`+version+`"`) {
		t.Fatalf("initialize: %q %v", line, err)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func echoServer(t *testing.T) *server.Server {
	echo := agent.NewFuncTool(agent.ToolSpec{Name: "echo", Description: "echoes", ReadOnly: true,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, args json.RawMessage) (*agent.Result, error) {
			var a struct{ Text string }
			_ = json.Unmarshal(args, &a)
			return agent.TextResult(a.Text), nil
		})
	return newServer(t, server.Config{Toolsets: []agent.Toolset{agent.NewToolset("t", echo)}})
}

func callLine(id int, text string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, id, text)
}

// TestStdioServedByLineConn: a session on go-sdk's IOTransport (stdio) is
// served through mcp/internal/lineconn, and reads as go-sdk's stream
// connection reads: calls answered line by line; a batch answered with one
// array under 2025-03-26 and refused (the session ends) from 2025-06-18
// on; a line over MaxLineLength ends the session.
func TestStdioServedByLineConn(t *testing.T) {
	batch := `[` + callLine(1, "a") + `,` + callLine(2, "b") + `]`
	tests := []struct {
		name    string
		version string
		maxLine int
		send    string
		want    []string // substrings of the one line answered, in order; nil: the session ends
	}{
		{"a call", "2025-11-25", 0, callLine(1, "hello"), []string{`"id":1`, `"text":"hello"`}},
		{"a batch before 2025-06-18", "2025-03-26", 0, batch, []string{`[{`, `"id":1`, `"text":"a"`, `"id":2`, `"text":"b"`, `}]`}},
		{"a batch from 2025-06-18", "2025-06-18", 0, batch, nil},
		// The bound counts bytes read for a frame, some of which the frame
		// before may have read ahead (as in go-sdk): twice over is over.
		{"a line over the bound", "2025-11-25", 600, callLine(1, strings.Repeat("x", 1300)), nil},
		{"a line within the bound", "2025-11-25", 600, callLine(1, strings.Repeat("x", 300)), []string{`"id":1`, strings.Repeat("x", 300)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := runOnPipes(t, echoServer(t), tt.maxLine)
			p.handshake(t, tt.version)
			p.send(t, tt.send)
			line, err := p.recv(t)
			if tt.want == nil {
				if err != io.EOF {
					t.Fatalf("the session went on: %q %v", line, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rest := line
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("answer %q lacks %q (in order)", line, w)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// TestStdioCallGarbage: a call on stdio allocates what go-sdk's
// server needs (one 32 KiB decoder buffer for the request's _meta, one for
// its params) and not the three more go-sdk's stream connection took to
// frame and decode each request (issue 22: GC was 40% of the gateway's
// CPU). Counted in this process over 200 calls.
func TestStdioCallGarbage(t *testing.T) {
	p := runOnPipes(t, echoServer(t), 0)
	p.handshake(t, "2025-11-25")
	call := func(id int) {
		p.send(t, callLine(id, "x"))
		if line, err := p.recv(t); err != nil || !strings.Contains(line, `"text":"x"`) {
			t.Fatalf("call %d: %q %v", id, line, err)
		}
	}
	for i := range 20 {
		call(1 + i)
	}
	const n = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		call(100 + i)
	}
	runtime.ReadMemStats(&after)
	perCall := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("%d bytes allocated per call", perCall)
	// go-sdk's stream connection: about 160 KiB (five 32 KiB buffers).
	if perCall > 100<<10 {
		t.Fatalf("%d bytes allocated per call, want at most 100 KiB", perCall)
	}
}
