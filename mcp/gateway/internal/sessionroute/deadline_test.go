package sessionroute

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// streamLocal serves S1: its creation, then GET streams that wait for
// their request's end, counted in inFlight.
func streamLocal(inFlight *atomic.Int32) func(int) http.Handler {
	return func(int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Header.Get(sessionHeader) == "" {
				w.Header().Set(sessionHeader, "S1")
				return
			}
			inFlight.Add(1)
			defer inFlight.Add(-1)
			_ = http.NewResponseController(w).Flush()
			<-req.Context().Done()
		})
	}
}

// TestOwnerGivesUpOnSilentReceiver: an owner streaming a forwarded
// request to a receiver that stops pinging cancels it after three
// heartbeats; one that pings keeps it.
func TestOwnerGivesUpOnSilentReceiver(t *testing.T) {
	const hb = 100 * time.Millisecond
	for _, pings := range []bool{true, false} {
		t.Run(map[bool]string{true: "pinging", false: "silent"}[pings], func(t *testing.T) {
			var inFlight atomic.Int32
			c := newCluster(t, 1, Config{Heartbeat: hb}, streamLocal(&inFlight))
			post(t, c.replicas[0].http.URL, "", "", http.StatusOK)
			nc := c.b.Conn()
			inbox := nc.NewInbox()
			sub, err := nc.Subscribe(inbox, func(m *nats.Msg) { _ = m.Respond([]byte{'A'}) })
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Unsubscribe()
			msg, _ := encodeStart(&start{V: wireVersion, Method: http.MethodGet, URI: "/", Host: "127.0.0.1",
				Header: http.Header{sessionHeader: {"S1"}}, Reply: inbox}, nil)
			reply, err := nc.Request(c.replicas[0].router.subject("r0"), msg, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			ctl, _, _, err := decodeStartReply(reply.Data)
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the owner serves the stream", func() bool { return inFlight.Load() == 1 })
			if pings {
				// Back to back, for six heartbeats: a loaded machine's
				// gaps stay as short as a round trip allows.
				for deadline := time.Now().Add(6 * hb); time.Now().Before(deadline); {
					if _, err := nc.Request(ctl, []byte{'P'}, 5*time.Second); err != nil {
						t.Fatalf("ping: %v", err)
					}
				}
				if inFlight.Load() != 1 {
					t.Fatal("after 6 heartbeats of pings the stream ended")
				}
			} else {
				waitFor(t, "the owner to give up on the silent receiver", func() bool { return inFlight.Load() == 0 })
			}
			_ = nc.Publish(ctl, []byte{'C'})
			waitFor(t, "the stream ends", func() bool { return inFlight.Load() == 0 })
		})
	}
}

// TestReceiverGivesUpOnSilentOwner: a receiver whose owner accepted a
// request but answers neither with frames nor pings answers 504 within a
// heartbeat and the ping's deadline.
func TestReceiverGivesUpOnSilentOwner(t *testing.T) {
	const hb = 100 * time.Millisecond
	c := newCluster(t, 1, Config{Heartbeat: hb}, func(int) http.Handler { return http.NotFoundHandler() })
	nc := c.b.Conn()
	ctl := nc.NewInbox()
	silent, err := nc.Subscribe(ctl, func(*nats.Msg) {}) // there, never answering
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Unsubscribe()
	owner, err := nc.Subscribe(c.replicas[0].router.subject("ghost"), func(m *nats.Msg) { _ = m.Respond(append([]byte{'K'}, ctl...)) })
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Unsubscribe()
	kv, err := c.b.JetStream().KeyValue(testkit.Ctx(t, 5*time.Second), bucketName(c.b.Prefix()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.PutString(testkit.Ctx(t, 5*time.Second), "S9", "ghost"); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	post(t, c.replicas[0].http.URL, "S9", "{}", http.StatusGatewayTimeout)
	if d := time.Since(t0); d > hb+startTimeout+2*time.Second {
		t.Errorf("answered after %v", d)
	}
}

// TestEntriesFollowSessions: a session's entry outlives the bucket's TTL
// while the session lives (renewed), and goes when the session ends
// without a DELETE (closed by the server, as by its idle timeout).
func TestEntriesFollowSessions(t *testing.T) {
	const ttl = 900 * time.Millisecond
	c := newCluster(t, 2, Config{TTL: ttl}, nil)
	cs := c.session(t, nil)
	defer cs.Close()
	kv, err := c.b.JetStream().KeyValue(testkit.Ctx(t, 5*time.Second), bucketName(c.b.Prefix()))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * ttl)
	if _, err := kv.Get(context.Background(), cs.ID()); err != nil {
		t.Fatalf("after twice the TTL the live session's entry: %v", err)
	}
	for _, rp := range c.replicas {
		for ss := range rp.mcp.Sessions() {
			_ = ss.Close()
		}
	}
	// Its owner forgets it (the TTL alone would not) and removes the entry.
	waitFor(t, "the ended session's entry goes", func() bool {
		_, err := kv.Get(context.Background(), cs.ID())
		return errors.Is(err, jetstream.ErrKeyNotFound) && !c.replicas[0].router.owns(cs.ID()) && !c.replicas[1].router.owns(cs.ID())
	})
}

// TestReplicaClosing: a forwarded request in flight when its owner, or
// the replica that received it, shuts down before the handler answered
// ends with 503 (not a 404 or an empty 200), and the owner's handler is
// cancelled.
func TestReplicaClosing(t *testing.T) {
	cases := []struct {
		name   string
		closes int // the replica shutting down: 0 the owner, 1 the receiver
		body   string
	}{
		{"owner", 0, "the replica holding the session is shutting down\n"},
		{"receiver", 1, "the replica is shutting down\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var inFlight atomic.Int32
			local := func(int) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					if req.Header.Get(sessionHeader) == "" {
						w.Header().Set(sessionHeader, "S1")
						return
					}
					inFlight.Add(1)
					defer inFlight.Add(-1)
					<-req.Context().Done()
				})
			}
			c := newCluster(t, 2, Config{}, local)
			post(t, c.replicas[0].http.URL, "", "", http.StatusOK)
			done := make(chan string)
			go func() { done <- post(t, c.replicas[1].http.URL, "S1", "{}", http.StatusServiceUnavailable) }()
			waitFor(t, "the owner serves the request", func() bool { return inFlight.Load() == 1 })
			_ = c.replicas[tc.closes].router.Close()
			if body := <-done; body != tc.body {
				t.Errorf("body %q, want %q", body, tc.body)
			}
			waitFor(t, "the owner's handler is cancelled", func() bool { return inFlight.Load() == 0 })
		})
	}
}

// TestVanishedRequestInbox: an owner that took a request but whose
// request inbox is gone (its serving ended) is answered 502, not 404: the
// session may be alive, so the client is not told to initialize again.
func TestVanishedRequestInbox(t *testing.T) {
	const hb = 100 * time.Millisecond
	c := newCluster(t, 1, Config{Heartbeat: hb}, func(int) http.Handler { return http.NotFoundHandler() })
	nc := c.b.Conn()
	gone := nc.NewInbox() // nobody subscribes
	owner, err := nc.Subscribe(c.replicas[0].router.subject("ghost"), func(m *nats.Msg) { _ = m.Respond(append([]byte{'K'}, gone...)) })
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Unsubscribe()
	kv, err := c.b.JetStream().KeyValue(testkit.Ctx(t, 5*time.Second), bucketName(c.b.Prefix()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.PutString(testkit.Ctx(t, 5*time.Second), "S8", "ghost"); err != nil {
		t.Fatal(err)
	}
	post(t, c.replicas[0].http.URL, "S8", "{}", http.StatusBadGateway)
	if n := c.replicas[0].router.missing.Load(); n != 0 {
		t.Errorf("%d sessions counted missing, want 0", n)
	}
}
