package lineconn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/failure"
)

// TestBatchRefusedFrom20250618 (issue 14, item 7): once the handshake
// negotiated 2025-06-18 or later, a JSON-RPC batch ends the connection
// with go-sdk's error, at the client's end (the answer to initialize or
// server/discover read) and at the server's (that answer written);
// earlier revisions, and a connection before its handshake, take them.
func TestBatchRefusedFrom20250618(t *testing.T) {
	const batch = `[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":7,"method":"b"}]` + "\n"
	tests := []struct {
		name    string
		method  string // the handshake request
		result  string // and its answer
		server  bool   // this end answers it
		refused bool
	}{
		{"no handshake yet", "", "", false, false},
		{"initialize 2024-11-05", "initialize", `{"protocolVersion":"2024-11-05"}`, false, false},
		{"initialize 2025-03-26", "initialize", `{"protocolVersion":"2025-03-26"}`, false, false},
		{"initialize 2025-06-18", "initialize", `{"protocolVersion":"2025-06-18"}`, false, true},
		{"initialize 2025-11-25", "initialize", `{"protocolVersion":"2025-11-25"}`, false, true},
		{"discover 2026-07-28", "server/discover", `{"supportedVersions":["2025-11-25","2026-07-28"]}`, false, true},
		{"discover without 2026-07-28", "server/discover", `{"supportedVersions":["2025-11-25"]}`, false, false},
		{"server end 2025-03-26", "initialize", `{"protocolVersion":"2025-03-26"}`, true, false},
		{"server end 2025-11-25", "initialize", `{"protocolVersion":"2025-11-25"}`, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, peer, lines := newTestLineConn(t, 0)
			ctx := context.Background()
			id := intID(1)
			switch {
			case tt.method != "" && !tt.server:
				go func() { _, _ = lines.ReadString('\n') }()
				if err := c.Write(ctx, &jsonrpc.Request{ID: id, Method: tt.method, Params: []byte(`{}`)}); err != nil {
					t.Fatal(err)
				}
				send(peer, `{"jsonrpc":"2.0","id":1,"result":`+tt.result+"}\n")
				if _, err := readTimeout(t, c); err != nil {
					t.Fatal(err)
				}
			case tt.method != "":
				send(peer, `{"jsonrpc":"2.0","id":1,"method":"`+tt.method+`","params":{}}`+"\n")
				if _, err := readTimeout(t, c); err != nil {
					t.Fatal(err)
				}
				go func() { _, _ = lines.ReadString('\n') }()
				if err := c.Write(ctx, &jsonrpc.Response{ID: id, Result: []byte(tt.result)}); err != nil {
					t.Fatal(err)
				}
			}
			send(peer, batch)
			_, err := readTimeout(t, c)
			if !tt.refused {
				if err != nil {
					t.Fatalf("batch refused: %v", err)
				}
				return
			}
			if !errors.Is(err, failure.Protocol) || !strings.Contains(err.Error(), "JSON-RPC batching is not supported in 2025-06-18 and later") {
				t.Fatalf("err = %v, want go-sdk's refusal as kind protocol", err)
			}
		})
	}
}

// readAll reads c until it fails (at most 64 messages), returning the
// messages and whether it ended cleanly (io.EOF).
func readAll(c gomcp.Connection) ([]jsonrpc.Message, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []jsonrpc.Message
	for range 64 {
		m, err := c.Read(ctx)
		if err != nil {
			return out, errors.Is(err, io.EOF), err
		}
		out = append(out, normal(m))
	}
	return out, true, nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// streamSameAsGoSDK feeds data to go-sdk's stream connection (what
// IOTransport and CommandTransport use, at a client, which takes batches)
// and to a lineConn, and checks that they read the same messages and end
// alike; then to a lineConn that negotiated 2025-11-25, which must read
// the same until the first batch and refuse it.
func streamSameAsGoSDK(data []byte) error {
	theirsConn, err := (&gomcp.IOTransport{Reader: io.NopCloser(bytes.NewReader(data)), Writer: nopWriteCloser{io.Discard}}).Connect(context.Background())
	if err != nil {
		return err
	}
	defer theirsConn.Close()
	theirs, theirsEOF, theirsErr := readAll(theirsConn)

	read := func(version string) ([]jsonrpc.Message, bool, error) {
		ours, peer := net.Pipe()
		defer peer.Close()
		c := New(ours, ours, Options{Close: ours.Close, MaxFrame: gomcp.DefaultMaxLineLength})
		defer c.Close()
		c.gate.version = version
		go func() {
			_, _ = peer.Write(data)
			_ = peer.Close()
		}()
		return readAll(c)
	}
	ours, oursEOF, oursErr := read("")
	if len(ours) != len(theirs) || len(ours) > 0 && !reflect.DeepEqual(ours, theirs) || oursEOF != theirsEOF {
		return fmt.Errorf("%q:\nours   %d messages, %v\ngo-sdk %d messages, %v", data, len(ours), oursErr, len(theirs), theirsErr)
	}
	gated, gatedEOF, gatedErr := read("2025-11-25")
	if len(gated) > len(ours) || len(gated) > 0 && !reflect.DeepEqual(gated, ours[:len(gated)]) {
		return fmt.Errorf("%q: under 2025-11-25 read %d messages, not a prefix of the %d read before", data, len(gated), len(ours))
	}
	refused := gatedErr != nil && strings.Contains(gatedErr.Error(), "JSON-RPC batching is not supported")
	switch {
	case len(gated) < len(ours) && !refused:
		return fmt.Errorf("%q: under 2025-11-25 stopped early with %v", data, gatedErr)
	case !bytes.Contains(data, []byte("[")) && (refused || gatedEOF != oursEOF):
		return fmt.Errorf("%q: no batch, but under 2025-11-25: %v", data, gatedErr)
	}
	return nil
}

func TestStreamSameAsGoSDK(t *testing.T) {
	for _, s := range fuzzStreams {
		if err := streamSameAsGoSDK([]byte(s)); err != nil {
			t.Error(err)
		}
	}
}

var fuzzStreams = []string{
	`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n",
	`[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":1,"method":"b"}]` + "\n" + `{"jsonrpc":"2.0","method":"c"}` + "\n",
	`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":1,"method":"b"}]` + "\n",
	`[{"jsonrpc":"2.0","id":1,"method":"a"}]` + "\n" + `[{"jsonrpc":"2.0","id":1,"method":"b"}]` + "\n",
	`[]` + "\n",
	`[{"jsonrpc":"2.0","id":2,"result":1},{"jsonrpc":"2.0"}]` + "\n",
	`{"jsonrpc":"2.0","method":"a"} x` + "\n",
	`{"jsonrpc":"2.0",` + "\n" + `"method":"a"}` + "\r\n",
	"[1,\n",
	`{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"m"}}`,
	"Server started\n",
}

// FuzzLineConnStream: the connection reads streams (batches included)
// exactly as go-sdk's stream connection does, and under 2025-06-18 or
// later refuses the first batch and nothing else.
func FuzzLineConnStream(f *testing.F) {
	for _, s := range fuzzStreams {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		if err := streamSameAsGoSDK(data); err != nil {
			t.Fatal(err)
		}
	})
}
