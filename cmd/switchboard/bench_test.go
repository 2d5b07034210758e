package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/internal/testkit"
)

var countArgs = []string{"-mcp-config", filepath.Join("testdata", "count.mcp.json"), "-allow-all"}

// endpoint is a client session on a server process, and the processes
// whose CPU its requests cost.
type endpoint struct {
	cs   *gomcp.ClientSession
	pids func() []int
	tool string // the echo tool's name on this endpoint
}

// connectCmd connects go-sdk's client to cmd over stdio, offering the
// protocol revision protocol ("": go-sdk's latest).
func connectCmd(tb testing.TB, cmd *exec.Cmd, protocol string) *gomcp.ClientSession {
	tb.Helper()
	c := gomcp.NewClient(&gomcp.Implementation{Name: "bench-client", Version: "1"}, nil)
	cs, err := c.Connect(testkit.Ctx(tb, 60*time.Second), &gomcp.CommandTransport{Command: cmd}, &gomcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// directEndpoint is the count server spoken to directly.
func directEndpoint(tb testing.TB, protocol string) endpoint {
	nm := testkit.NodeModules(tb)
	cmd := exec.Command(testkit.Node22(tb), filepath.Join(filepath.Dir(nm), "mcp-count-server.mjs"))
	cs := connectCmd(tb, cmd, protocol)
	return endpoint{cs: cs, tool: "echo", pids: func() []int { return []int{cmd.Process.Pid} }}
}

// gatewayEndpoint is the count server behind the gateway (both on stdio).
func gatewayEndpoint(tb testing.TB, protocol string) endpoint {
	cmd := exec.Command(gatewayBin(tb), append([]string{"mcp", "serve", "-prefix", "on", "-log-level", "warn"}, countArgs...)...)
	cmd.Env = gatewayEnv(tb)
	cs := connectCmd(tb, cmd, protocol)
	return endpoint{cs: cs, tool: "mcp__count__echo", pids: func() []int { return append([]int{cmd.Process.Pid}, children(cmd.Process.Pid)...) }}
}

// relayEndpoint is the count server behind testdata/relay, the cheapest
// process in the middle: the floor of what the gateway's hop can cost.
func relayEndpoint(tb testing.TB, protocol string) endpoint {
	relayPath := testkit.GoBinary(tb, "./testdata/relay")
	nm := testkit.NodeModules(tb)
	cmd := exec.Command(relayPath, testkit.Node22(tb), filepath.Join(filepath.Dir(nm), "mcp-count-server.mjs"))
	cs := connectCmd(tb, cmd, protocol)
	return endpoint{cs: cs, tool: "mcp__count__echo", pids: func() []int { return append([]int{cmd.Process.Pid}, children(cmd.Process.Pid)...) }}
}

// children are the pids of pid's child processes.
func children(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(s); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// cpuOf is the user+system CPU time the processes used so far.
func cpuOf(pids []int) time.Duration {
	var ticks int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the command (which may hold spaces) start after ')'.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + s
	}
	return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (e endpoint) call(tb testing.TB) {
	res, err := e.cs.CallTool(testkit.Ctx(tb, 30*time.Second), &gomcp.CallToolParams{Name: e.tool, Arguments: map[string]any{"text": "x"}})
	if err != nil || res.IsError {
		tb.Fatalf("%s: %v %+v", e.tool, err, res)
	}
}

// received is the count of echo calls the count server behind e received.
func (e endpoint) received(tb testing.TB) int {
	name := strings.TrimSuffix(e.tool, "echo") + "count"
	res, err := e.cs.CallTool(testkit.Ctx(tb, 30*time.Second), &gomcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil || res.IsError {
		tb.Fatalf("%s: %v", name, err)
	}
	n, err := strconv.Atoi(res.Content[0].(*gomcp.TextContent).Text)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// phase runs n sequential calls on e and returns the wall time, the
// servers' CPU and the client's CPU they took.
func phase(tb testing.TB, e endpoint, n int) (wall, server, client time.Duration) {
	s0, c0, t0 := cpuOf(e.pids()), selfCPU(), time.Now()
	for range n {
		e.call(tb)
	}
	return time.Since(t0), cpuOf(e.pids()) - s0, selfCPU() - c0
}

// BenchmarkGatewayCall: one tools/call through the gateway (client ->
// gateway on stdio -> count server on stdio) against the same call made
// directly (client -> count server on stdio), in the same run, every
// server in its own process; and, as the floor of any process in the
// middle, the same call through testdata/relay, which copies lines and
// parses nothing. Reports each path's time and CPU per call (servers'
// and client's), requests/s and the ratios gateway/direct and
// relay/direct; the count servers' own counts of calls received check the
// arithmetic.
//
// The client offers go-sdk's latest revision ("latest"), which the
// gateway speaks (2026-07-28: every request carries the client's _meta,
// and a call runs as a multi round-trip one) and the count server does not
// (it answers 2025-11-25), or 2025-11-25 to both ("2025-11-25": the same
// protocol on both paths).
func BenchmarkGatewayCall(b *testing.B) {
	for _, protocol := range []string{"", "2025-11-25"} {
		name := protocol
		if name == "" {
			name = "latest"
		}
		b.Run(name, func(b *testing.B) { benchGatewayCall(b, protocol) })
	}
}

// pathStats are one path's totals over a benchmark.
type pathStats struct {
	wall, server, client time.Duration
}

func (p *pathStats) add(wall, server, client time.Duration) {
	p.wall, p.server, p.client = p.wall+wall, p.server+server, p.client+client
}

func benchGatewayCall(b *testing.B, protocol string) {
	direct, gw, relay := directEndpoint(b, protocol), gatewayEndpoint(b, protocol), relayEndpoint(b, protocol)
	b.Logf("negotiated: direct %s, gateway %s", direct.cs.InitializeResult().ProtocolVersion, gw.cs.InitializeResult().ProtocolVersion)
	for range 50 { // warm up every path (JIT, connections)
		direct.call(b)
		gw.call(b)
		relay.call(b)
	}
	b.ResetTimer()
	// Interleave in chunks so every path sees the same machine load; the
	// median of the chunks' ratios resists bursts of load from other work.
	var d, g, r pathStats
	var ratios, relayRatios []float64
	gwPid := gw.pids()[0]
	gwOwn0 := cpuOf([]int{gwPid})
	const chunk = 100
	for done := 0; done < b.N; {
		n := min(chunk, b.N-done)
		dw, s, c := phase(b, direct, n)
		d.add(dw, s, c)
		gwl, s, c := phase(b, gw, n)
		g.add(gwl, s, c)
		rw, s, c := phase(b, relay, n)
		r.add(rw, s, c)
		ratios = append(ratios, float64(gwl)/float64(dw))
		relayRatios = append(relayRatios, float64(rw)/float64(dw))
		done += n
	}
	b.StopTimer()
	gwOwn := cpuOf([]int{gwPid}) - gwOwn0
	slices.Sort(ratios)
	slices.Sort(relayRatios)
	for _, e := range []struct {
		name string
		ep   endpoint
	}{{"direct", direct}, {"gateway", gw}, {"relay", relay}} {
		if got, want := e.ep.received(b), b.N+50; got != want {
			b.Fatalf("the count server behind the %s path received %d calls, want %d", e.name, got, want)
		}
	}
	n := float64(b.N)
	for _, p := range []struct {
		name string
		st   pathStats
	}{{"direct", d}, {"gateway", g}, {"relay", r}} {
		b.ReportMetric(float64(p.st.wall.Nanoseconds())/n, p.name+"-ns/call")
		b.ReportMetric(n/p.st.wall.Seconds(), p.name+"-calls/s")
		b.ReportMetric(float64(p.st.server.Microseconds())/n, p.name+"-servers-cpu-µs/call")
		b.ReportMetric(float64(p.st.client.Microseconds())/n, p.name+"-client-cpu-µs/call")
	}
	b.ReportMetric(float64(gwOwn.Microseconds())/n, "gateway-own-cpu-µs/call")
	b.ReportMetric(float64(g.wall)/float64(d.wall), "ratio")
	b.ReportMetric(ratios[len(ratios)/2], "median-chunk-ratio")
	b.ReportMetric(float64(r.wall)/float64(d.wall), "relay-ratio")
	b.ReportMetric(relayRatios[len(relayRatios)/2], "relay-median-chunk-ratio")
}

// TestThousandConcurrentCalls: 1,000 concurrent tools/call through one
// gateway process (Streamable HTTP, 10 client sessions) to a stdio server
// all succeed, and the server received exactly 1,000.
func TestThousandConcurrentCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node processes")
	}
	url := startHTTP(t, gatewayEnv(t), countArgs...)
	var sessions []*gomcp.ClientSession
	for range 10 {
		c := gomcp.NewClient(&gomcp.Implementation{Name: "load", Version: "1"}, nil)
		cs, err := c.Connect(ctx(t, 30*time.Second), &gomcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		sessions = append(sessions, cs)
	}
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for i := range 1000 {
		cs := sessions[i%len(sessions)]
		wg.Go(func() {
			res, err := cs.CallTool(ctx(t, 90*time.Second), &gomcp.CallToolParams{Name: "mcp__count__echo", Arguments: map[string]any{"text": strconv.Itoa(i)}})
			if err == nil && (res.IsError || res.Content[0].(*gomcp.TextContent).Text != strconv.Itoa(i)) {
				err = fmt.Errorf("result %+v", res.Content)
			}
			if err != nil {
				mu.Lock()
				failures = append(failures, err.Error())
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if len(failures) > 0 {
		t.Fatalf("%d of 1000 calls failed, first: %s", len(failures), failures[0])
	}
	got := endpoint{cs: sessions[0], tool: "mcp__count__echo"}.received(t)
	if got != 1000 {
		t.Errorf("the server received %d calls, want 1000", got)
	}
	t.Logf("1000 concurrent calls through one gateway: all succeeded in %v (%.0f calls/s); server received %d", elapsed, 1000/elapsed.Seconds(), got)
}
