package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboard-dev/switchboard/mcp/internal/lineconn"
)

// fakeStdioServer answers requests on peer as told by answer (which
// returns the lines to write for a line read), counting the pings.
func fakeStdioServer(t *testing.T, peer net.Conn, pings *atomic.Int32, answer func(req map[string]any) []string) {
	t.Helper()
	go func() {
		sc := bufio.NewScanner(peer)
		for sc.Scan() {
			var req map[string]any
			if json.Unmarshal(sc.Bytes(), &req) != nil {
				continue
			}
			if req["method"] == "ping" {
				pings.Add(1)
			}
			for _, line := range answer(req) {
				if _, err := peer.Write([]byte(line + "\n")); err != nil {
					return
				}
			}
		}
	}()
}

func newNudgedConn(t *testing.T, first, max time.Duration) (*lineconn.Conn, net.Conn) {
	t.Helper()
	ours, peer := net.Pipe()
	c := newClientConn(ours, ours, lineconn.Options{Close: ours.Close}, clientHooks{nudge: newNudger(first, max)})
	t.Cleanup(func() { _ = c.Close(); _ = peer.Close() })
	return c, peer
}

func readTimeout(t *testing.T, c *lineconn.Conn) (jsonrpc.Message, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Read(ctx)
}

func reply(id any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{}})
	return string(b)
}

// TestNudgeUnsticksServer: a server that answers only once more input
// arrives (a Go 1.26 server caught in the stop-the-world race) is pinged,
// answers, and the ping's answer never reaches the client. It runs on
// synctest's clock: the nudger's timers and the pipe are in the bubble.
func TestNudgeUnsticksServer(t *testing.T) { synctest.Test(t, testNudgeUnsticksServer) }

func testNudgeUnsticksServer(t *testing.T) {
	c, peer := newNudgedConn(t, 30*time.Millisecond, time.Second)
	var pings atomic.Int32
	var held []string
	fakeStdioServer(t, peer, &pings, func(req map[string]any) []string {
		if req["method"] == "ping" {
			out := append([]string{reply(req["id"])}, held...)
			held = nil
			return out
		}
		held = append(held, reply(req["id"]))
		return nil
	})
	ctx := context.Background()
	if err := c.Write(ctx, &jsonrpc.Request{ID: intID(1), Method: "tools/call", Params: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	msg, err := readTimeout(t, c)
	if err != nil {
		t.Fatal(err)
	}
	if resp, ok := msg.(*jsonrpc.Response); !ok || resp.ID != intID(1) {
		t.Fatalf("read %#v, want the answer to request 1", msg)
	}
	if pings.Load() != 1 {
		t.Fatalf("%d pings, want 1", pings.Load())
	}
}

// TestNudgeQuiet: a server that answers promptly is never pinged; one
// that is slow but alive is pinged with backoff, and no more once the
// request is cancelled. Each case runs on synctest's clock, so the counts
// hold exactly however busy the machine is.
func TestNudgeQuiet(t *testing.T) {
	ctx := context.Background()
	t.Run("prompt", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// Answered calls leave nothing outstanding: a bug that kept one
			// would ping 200 ms after the first call.
			c, peer := newNudgedConn(t, 200*time.Millisecond, time.Second)
			var pings atomic.Int32
			fakeStdioServer(t, peer, &pings, func(req map[string]any) []string { return []string{reply(req["id"])} })
			for i := range 10 {
				if err := c.Write(ctx, &jsonrpc.Request{ID: intID(int64(i)), Method: "tools/call"}); err != nil {
					t.Fatal(err)
				}
				if _, err := readTimeout(t, c); err != nil {
					t.Fatal(err)
				}
				time.Sleep(10 * time.Millisecond) // the fake clock: calls 10 ms apart
			}
			time.Sleep(300 * time.Millisecond) // past the first nudge, had a call stayed outstanding
			synctest.Wait()
			if n := pings.Load(); n != 0 {
				t.Fatalf("%d pings to a prompt server", n)
			}
		})
	})
	t.Run("slow", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c, peer := newNudgedConn(t, 20*time.Millisecond, 80*time.Millisecond)
			var pings atomic.Int32
			fakeStdioServer(t, peer, &pings, func(req map[string]any) []string {
				if req["method"] == "ping" {
					return []string{reply(req["id"])}
				}
				return nil // the call itself never ends
			})
			go func() { // go-sdk's reader: every message read (none but dropped pongs)
				for {
					if _, err := c.Read(context.Background()); err != nil {
						return
					}
				}
			}()
			if err := c.Write(ctx, &jsonrpc.Request{ID: intID(7), Method: "tools/call"}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(400 * time.Millisecond) // the fake clock
			synctest.Wait()
			// Pings at about 20, 60, 140, 220, 300, 380 ms: backoff to 80 ms.
			if n := pings.Load(); n < 3 || n > 7 {
				t.Fatalf("%d pings in 400ms with backoff from 20ms to 80ms", n)
			}
			if err := c.Write(ctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":7}`)}); err != nil {
				t.Fatal(err)
			}
			synctest.Wait() // a ping in flight lands
			n := pings.Load()
			time.Sleep(time.Second) // the fake clock: many backoffs
			synctest.Wait()
			if m := pings.Load(); m != n {
				t.Fatalf("%d pings after the only request was cancelled", m-n)
			}
		})
	})
}

func intID(n int64) jsonrpc.ID {
	id, _ := jsonrpc.MakeID(float64(n))
	return id
}
