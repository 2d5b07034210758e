package lineconn

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// newTestLineConn returns a lineConn on one end of a pipe, and the other
// end with a line reader on it.
func newTestLineConn(t *testing.T, maxFrame int) (*Conn, net.Conn, *bufio.Reader) {
	t.Helper()
	ours, peer := net.Pipe()
	c := New(ours, ours, Options{Close: ours.Close, MaxFrame: maxFrame})
	t.Cleanup(func() { _ = c.Close(); _ = peer.Close() })
	return c, peer, bufio.NewReader(peer)
}

// send writes s from the peer's side without waiting for it to be read.
func send(peer net.Conn, s string) {
	go func() { _, _ = io.WriteString(peer, s) }()
}

func readTimeout(t *testing.T, c *Conn) (jsonrpc.Message, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Read(ctx)
}

func TestLineConnFrames(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		method []string // the methods of the messages read, in order
		err    string   // then this error
	}{
		{"one per line", "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"b\"}\r\n", []string{"a", "b"}, ""},
		{"a value across lines", "{\"jsonrpc\":\"2.0\",\n  \"method\": \"a\"\n}\n", []string{"a"}, ""},
		{"garbage", "Server listening on 8080\n", nil, "invalid character 'S'"},
		{"trailing data", "{\"jsonrpc\":\"2.0\",\"method\":\"a\"} x\n", nil, "invalid trailing data"},
		{"not JSON-RPC", "{\"jsonrpc\":\"2.0\"}\n", nil, "a response has no ID"},
		{"too large", "{\"jsonrpc\":\"2.0\",\"method\":\"" + strings.Repeat("x", 300) + "\"}\n", nil, "exceeds the size limit (256 bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, peer, _ := newTestLineConn(t, 256)
			send(peer, tt.in)
			for _, want := range tt.method {
				msg, err := readTimeout(t, c)
				if err != nil {
					t.Fatal(err)
				}
				if req, ok := msg.(*jsonrpc.Request); !ok || req.Method != want {
					t.Fatalf("read %#v, want method %q", msg, want)
				}
			}
			if tt.err == "" {
				return
			}
			_, err := readTimeout(t, c)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want one saying %q", err, tt.err)
			}
		})
	}
}

// TestLineConnBatch: a batch's messages are read one by one, and the
// responses to its requests go back as one array, in the batch's order,
// once the last is written.
func TestLineConnBatch(t *testing.T) {
	c, peer, lines := newTestLineConn(t, 0)
	send(peer, `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"note"},{"jsonrpc":"2.0","id":"two","method":"b"}]`+"\n")
	var ids []jsonrpc.ID
	for range 3 {
		msg, err := readTimeout(t, c)
		if err != nil {
			t.Fatal(err)
		}
		if req := msg.(*jsonrpc.Request); req.ID.IsValid() {
			ids = append(ids, req.ID)
		}
	}
	ctx := context.Background()
	got := make(chan string, 1)
	go func() {
		line, _ := lines.ReadString('\n')
		got <- line
	}()
	// Answer in the other order: nothing goes out until both are in.
	if err := c.Write(ctx, &jsonrpc.Response{ID: ids[1], Result: json.RawMessage(`"B"`)}); err != nil {
		t.Fatal(err)
	}
	select {
	case line := <-got:
		t.Fatalf("wrote %q before the batch was complete", line)
	case <-time.After(50 * time.Millisecond):
	}
	if err := c.Write(ctx, &jsonrpc.Response{ID: ids[0], Result: json.RawMessage(`"A"`)}); err != nil {
		t.Fatal(err)
	}
	line := <-got
	var resps []map[string]any
	if err := json.Unmarshal([]byte(line), &resps); err != nil || len(resps) != 2 || resps[0]["result"] != "A" || resps[1]["result"] != "B" {
		t.Fatalf("batch response %q (%v)", line, err)
	}

	// A batch repeating an ID is refused.
	send(peer, `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":1,"method":"b"}]`+"\n")
	if _, err := readTimeout(t, c); err == nil || !strings.Contains(err.Error(), "repeats the request ID 1") {
		t.Fatalf("err = %v", err)
	}
}

// TestLineConnClose: Close unblocks a Read, later Reads end with io.EOF
// and Writes with ErrConnectionClosed, and a second Close is harmless.
// It runs in a synctest bubble: synctest.Wait, not a sleep, has the Read
// blocked before Close.
func TestLineConnClose(t *testing.T) { synctest.Test(t, testLineConnClose) }

func testLineConnClose(t *testing.T) {
	c, _, _ := newTestLineConn(t, 0)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		errc <- err
	}()
	synctest.Wait()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, io.EOF) {
			t.Fatalf("Read after Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not unblock Read")
	}
	if err := c.Write(context.Background(), &jsonrpc.Request{Method: "x"}); !errors.Is(err, gomcp.ErrConnectionClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Read(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Read on a done context: %v", err)
	}
}

func BenchmarkDecodeMessage(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hello"}],"isError":false}}`)
	for _, c := range []struct {
		name   string
		decode func([]byte) (jsonrpc.Message, error)
	}{{"ours", func(b []byte) (jsonrpc.Message, error) { return decodeMessage(b, false) }}, {"go-sdk", jsonrpc.DecodeMessage}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.decode(msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func intID(n int64) jsonrpc.ID {
	id, _ := jsonrpc.MakeID(float64(n))
	return id
}
