package lineconn

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboard-dev/switchboard/failure"
)

// TestWriteIsBounded: a write to a peer that does not read ends with its
// context, at its deadline, or after the stall bound; one that ended part
// way or stalled breaks the connection (Read and later Writes fail at
// once), one that wrote nothing leaves it usable. Each case runs on
// synctest's clock (net.Pipe's deadlines are timers in the bubble), so a
// write ends exactly when its bound says, however busy the machine.
func TestWriteIsBounded(t *testing.T) {
	big := &jsonrpc.Request{ID: intID(1), Method: "tools/call", Params: []byte(`{"text":"` + strings.Repeat("x", 1<<20) + `"}`)}
	tests := []struct {
		name       string
		peerReads  int64 // bytes the peer reads before it stops
		ctx        func() (context.Context, context.CancelFunc)
		wantKind   failure.Kind
		wantBroken bool
		stall      time.Duration // the stall bound (default 300ms)
		ends       time.Duration // when the write ends
	}{
		{"stall", 0, func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			failure.Unavailable, true, 0, 300 * time.Millisecond},
		{"cancel, nothing written", 0, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			return ctx, cancel
		}, failure.Canceled, false, 0, 100 * time.Millisecond},
		// The stall bound is past the deadline: the deadline ends it.
		{"deadline, part written", 100, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Second)
		}, failure.Timeout, true, 10 * time.Second, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, peer, _ := newTestLineConn(t, 0)
				c.stall = 300 * time.Millisecond
				if tt.stall > 0 {
					c.stall = tt.stall
				}
				if tt.peerReads > 0 {
					go func() { _, _ = io.CopyN(io.Discard, peer, tt.peerReads) }()
				}
				ctx, cancel := tt.ctx()
				defer cancel()
				t0 := time.Now()
				err := c.Write(ctx, big)
				if took := time.Since(t0); took != tt.ends {
					t.Fatalf("the write took %s, want %s", took, tt.ends)
				}
				if failure.KindOf(err) != tt.wantKind {
					t.Fatalf("err = %v (kind %v), want kind %v", err, failure.KindOf(err), tt.wantKind)
				}
				if c.Broken() != tt.wantBroken {
					t.Fatalf("broken = %v, want %v", c.Broken(), tt.wantBroken)
				}
				if !tt.wantBroken {
					return
				}
				t0 = time.Now()
				if err := c.Write(context.Background(), &jsonrpc.Request{Method: "ping"}); !errors.Is(err, failure.Unavailable) || time.Since(t0) != 0 {
					t.Fatalf("a write after the break: %v after %s, want unavailable at once", err, time.Since(t0))
				}
				if _, err := readTimeout(t, c); !errors.Is(err, failure.Unavailable) {
					t.Fatalf("a read after the break: %v", err)
				}
			})
		})
	}
}

// noDeadlines has the deadline method, which fails, as an *os.File that is
// not in the netpoller (a regular file, a blocking stdout) does.
type noDeadlines struct{ io.Writer }

func (noDeadlines) SetWriteDeadline(time.Time) error { return os.ErrNoDeadline }

// TestWriteWithoutDeadlines: a writer whose deadlines do not work (a
// served process's blocking stdout, a regular file) is written to without
// bounds rather than failing every write.
func TestWriteWithoutDeadlines(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf strings.Builder
	tests := []struct {
		name string
		w    io.Writer
		got  func() string
	}{
		{"a regular file", f, func() string { b, _ := os.ReadFile(f.Name()); return string(b) }},
		{"a writer whose deadlines fail", noDeadlines{&buf}, buf.String},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ours, peer := net.Pipe()
			defer peer.Close()
			c := New(ours, tt.w, Options{Close: ours.Close})
			defer c.Close()
			if err := c.Write(context.Background(), &jsonrpc.Request{Method: "ping"}); err != nil {
				t.Fatalf("Write: %v", err)
			}
			if got, want := tt.got(), `{"jsonrpc":"2.0","method":"ping"}`+"\n"; got != want {
				t.Fatalf("wrote %q, want %q", got, want)
			}
		})
	}
}
