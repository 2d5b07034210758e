package console

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard/bus"
)

// syncRecorder is a ResponseRecorder safe to read while the handler writes.
type syncRecorder struct {
	mu sync.Mutex
	*httptest.ResponseRecorder
}

func (r *syncRecorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ResponseRecorder.Write(p)
}

func (r *syncRecorder) Flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ResponseRecorder.Flush()
}

func (r *syncRecorder) body() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Body.String()
}

// TestLiveStream: the live stream says hello, passes on what the hub
// publishes, pings after each quiet heartbeat, and ends with the request;
// a page that falls a buffer behind is disconnected.
func TestLiveStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := New(t.Context(), Config{Bus: &bus.Bus{}}) // no I/O: the bus is not used here
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/api/live", nil)
		rec := &syncRecorder{ResponseRecorder: httptest.NewRecorder()}
		done := make(chan struct{})
		go func() { c.getLive(rec, req); close(done) }()
		synctest.Wait()
		if b := rec.body(); !strings.HasPrefix(b, "event: hello\n") {
			t.Fatalf("stream starts %q", b)
		}
		c.hub.publish(topicRuns, liveMsg{Kind: "run", Run: &RunSummary{ID: "run_x", Input: "token=hunter2"}})
		synctest.Wait()
		if b := rec.body(); !strings.Contains(b, `"id":"run_x"`) || strings.Contains(b, "hunter2") {
			t.Fatalf("published message: %q", b)
		}
		if strings.Contains(rec.body(), ": ping") {
			t.Fatal("a ping before the heartbeat")
		}
		time.Sleep(heartbeat)
		synctest.Wait()
		if !strings.Contains(rec.body(), ": ping") {
			t.Fatal("no ping after a quiet heartbeat")
		}
		cancel()
		<-done

		// A subscriber that never reads is dropped once its buffer is full.
		ch, stop := c.hub.subscribe(topicRuns)
		defer stop()
		for range subscriberBuffer + 1 {
			c.hub.publish(topicRuns, liveMsg{Kind: "state", Run: &RunSummary{ID: "run_y"}})
		}
		n := 0
		for range ch {
			n++
		}
		if n != subscriberBuffer {
			t.Errorf("the slow page got %d messages before being dropped, want %d", n, subscriberBuffer)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
