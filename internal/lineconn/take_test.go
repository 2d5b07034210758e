package lineconn

import (
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboard-dev/switchboard/failure"
)

// TestTake: Options.Take sees each frame that is one JSON object, raw and
// before Read; the frames it takes never reach Read, the others do in
// order, and batches are never offered.
func TestTake(t *testing.T) {
	ours, peer := net.Pipe()
	var mu sync.Mutex
	var offered []string
	c := New(ours, ours, Options{Close: ours.Close, Take: func(frame []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		offered = append(offered, string(frame))
		return strings.Contains(string(frame), `"take-me"`)
	}})
	t.Cleanup(func() { _ = c.Close(); _ = peer.Close() })
	send(peer, `{"jsonrpc":"2.0","method":"a"}`+"\n"+
		`{"jsonrpc":"2.0","method":"take-me"}`+"\n"+
		`[{"jsonrpc":"2.0","id":1,"method":"take-me"},{"jsonrpc":"2.0","id":2,"method":"c"}]`+"\n"+
		`{"jsonrpc":"2.0","method":"d"}`+"\n")
	var got []string
	for range 4 {
		msg, err := readTimeout(t, c)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, msg.(*jsonrpc.Request).Method)
	}
	if want := "a take-me c d"; strings.Join(got, " ") != want {
		t.Fatalf("Read gave %q, want %q (the batch whole, the lone take-me taken)", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(offered) != 3 || offered[1] != `{"jsonrpc":"2.0","method":"take-me"}` {
		t.Fatalf("Take was offered %q, want the three single frames raw", offered)
	}
}

// TestReadFailed: Options.ReadFailed learns of the error that ended
// reading (here the peer's garbage, a protocol failure), once; not of a
// Close.
func TestReadFailed(t *testing.T) {
	for _, garbage := range []bool{true, false} {
		ours, peer := net.Pipe()
		got := make(chan error, 2)
		c := New(ours, ours, Options{Close: ours.Close, ReadFailed: func(err error) { got <- err }})
		if garbage {
			send(peer, "not json\n")
			if _, err := readTimeout(t, c); !errors.Is(err, failure.Protocol) {
				t.Fatalf("Read: %v, want a protocol failure", err)
			}
			if err := <-got; !errors.Is(err, failure.Protocol) {
				t.Fatalf("ReadFailed got %v, want the protocol failure", err)
			}
		}
		_ = c.Close()
		_ = peer.Close()
		time.Sleep(20 * time.Millisecond)
		if len(got) != 0 {
			t.Fatalf("garbage %v: ReadFailed called again or for a Close: %v", garbage, <-got)
		}
	}
}
