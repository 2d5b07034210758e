package sessionroute

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkForwarded: a request (ping) of a session sent to its owner and
// the same request sent to another replica, which forwards it, in the
// same run; reports both latencies and their ratio. The forwarded
// requests the routers counted must be b.N.
func BenchmarkForwarded(b *testing.B) {
	c := newCluster(b, 2, Config{}, nil)
	cl := gomcp.NewClient(&gomcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := cl.Connect(b.Context(), &gomcp.StreamableClientTransport{Endpoint: c.lb.URL, MaxRetries: -1},
		&gomcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	var owner, other *replica
	for _, rp := range c.replicas {
		if rp.router.owns(cs.ID()) {
			owner = rp
		} else {
			other = rp
		}
	}
	if owner == nil || other == nil {
		b.Fatal("no owner")
	}
	hc := &http.Client{}
	ping := func(u string) {
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set(sessionHeader, cs.ID())
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"result":{}`) {
			b.Fatalf("ping: %d %s", resp.StatusCode, body)
		}
	}
	ping(owner.http.URL)
	ping(other.http.URL)
	fwd0, served0 := other.router.forwarded.Load(), owner.router.served.Load()
	var direct, forwarded time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		ping(owner.http.URL)
		t1 := time.Now()
		ping(other.http.URL)
		direct, forwarded = direct+t1.Sub(t0), forwarded+time.Since(t1)
	}
	b.StopTimer()
	if f, s := other.router.forwarded.Load()-fwd0, owner.router.served.Load()-served0; f != int64(b.N) || s != int64(b.N) {
		b.Fatalf("forwarded %d, served %d, want %d", f, s, b.N)
	}
	b.ReportMetric(float64(direct.Microseconds())/float64(b.N), "µs/direct")
	b.ReportMetric(float64(forwarded.Microseconds())/float64(b.N), "µs/forwarded")
	b.ReportMetric(float64(forwarded)/float64(direct), "ratio")
}
