package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// peerGateway is one gateway process in front of its own echo server(s)
// (testdata/echoserver), serving Streamable HTTP at url.
type peerGateway struct {
	name  string
	url   string
	pid   int    // the gateway process; its children, the echo servers, are not counted
	tool  string // the echo tool's name on the gateway
	count string // the file its echo servers count their calls in
}

// received is the echo calls g's echo servers received so far.
func (g peerGateway) received(tb testing.TB) int {
	fi, err := os.Stat(g.count)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		tb.Fatal(err)
	}
	return int(fi.Size())
}

// countFile is a file for an echo server to count calls in.
func countFile(tb testing.TB) string { return filepath.Join(tb.TempDir(), "calls") }

// echoServerBin is testdata/echoserver, built once per test binary.
func echoServerBin(tb testing.TB) string { return testkit.GoBinary(tb, "./testdata/echoserver") }

// startOurs is `switchboard mcp serve` on Streamable HTTP in front of the
// echo server, with the flags a user gives to serve one server and allow
// its tools (bin: the switchboard binary to run).
func startOurs(tb testing.TB, name, bin string) peerGateway {
	tb.Helper()
	cfg, count := filepath.Join(tb.TempDir(), "echo.mcp.json"), countFile(tb)
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"echo": map[string]any{"command": echoServerBin(tb), "args": []string{count}}}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		tb.Fatal(err)
	}
	url, cmd := startHTTPCmd(tb, bin, os.Environ(), "-prefix", "off", "-mcp-config", cfg, "-allow-all")
	return peerGateway{name: name, url: url, pid: cmd.Process.Pid, tool: "echo", count: count}
}

// startSupergateway is supergateway 4.0.0 (npm) serving the echo server
// over stateful Streamable HTTP: a server process per session.
func startSupergateway(tb testing.TB) peerGateway {
	tb.Helper()
	js := filepath.Join(testkit.NodeModules(tb), "supergateway", "dist", "index.js")
	port, count := freePort(tb), countFile(tb)
	cmd := exec.Command(testkit.Node22(tb), js, "--stdio", echoServerBin(tb)+" "+count, "--outputTransport", "streamableHttp",
		"--stateful", "--port", port, "--logLevel", "none")
	startListeningOn(tb, cmd, port)
	return peerGateway{name: "supergateway", url: "http://127.0.0.1:" + port + "/mcp", pid: cmd.Process.Pid, tool: "echo", count: count}
}

// startMCPProxy is mcp-proxy 6.7.19 (npm) serving the echo server (one
// process for every session) at /mcp with its defaults.
func startMCPProxy(tb testing.TB) peerGateway {
	tb.Helper()
	js := filepath.Join(testkit.NodeModules(tb), "mcp-proxy", "dist", "bin", "mcp-proxy.mjs")
	port, count := freePort(tb), countFile(tb)
	cmd := exec.Command(testkit.Node22(tb), js, "--host", "127.0.0.1", "--port", port, "--", echoServerBin(tb), count)
	startListeningOn(tb, cmd, port)
	return peerGateway{name: "mcp-proxy", url: "http://127.0.0.1:" + port + "/mcp", pid: cmd.Process.Pid, tool: "echo", count: count}
}

// freePort is a loopback TCP port free a moment ago.
func freePort(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// startListeningOn starts cmd and waits until it accepts connections on
// the loopback port; at cleanup it is interrupted (killed after 10 s).
func startListeningOn(tb testing.TB, cmd *exec.Cmd, port string) {
	tb.Helper()
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-done:
			tb.Fatalf("%s exited: %s", cmd.Path, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s did not listen on %s: %s", cmd.Args, port, stderr.String())
		}
	}
}

// peerSessions are n go-sdk client sessions on g over Streamable HTTP,
// sharing one HTTP transport that keeps a connection per session.
type peerSessions struct {
	g   peerGateway
	css []*gomcp.ClientSession
}

func connectPeer(tb testing.TB, g peerGateway, n int) *peerSessions {
	tb.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 4 * n // a POST and a GET stream per session, with room
	hc := &http.Client{Transport: tr}
	ps := &peerSessions{g: g}
	tb.Cleanup(tr.CloseIdleConnections)
	for range n {
		c := gomcp.NewClient(&gomcp.Implementation{Name: "peers-bench", Version: "1"}, nil)
		cs, err := c.Connect(testkit.Ctx(tb, 60*time.Second), &gomcp.StreamableClientTransport{Endpoint: g.url, HTTPClient: hc}, nil)
		if err != nil {
			tb.Fatalf("%s: %v", g.name, err)
		}
		tb.Cleanup(func() { _ = cs.Close() })
		ps.css = append(ps.css, cs)
	}
	return ps
}

// peerRound is what one round of load on one gateway gave.
type peerRound struct {
	calls int
	wall  time.Duration
	cpu   time.Duration // the gateway process's own CPU time
	lat   []time.Duration
}

func (r peerRound) perSecond() float64  { return float64(r.calls) / r.wall.Seconds() }
func (r peerRound) cpuPerCall() float64 { return float64(r.cpu.Microseconds()) / float64(r.calls) }

// quantile is the q-quantile of the round's latencies (nearest rank).
func (r peerRound) quantile(q float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	l := slices.Clone(r.lat)
	slices.Sort(l)
	i := int(q*float64(len(l))+0.5) - 1
	return l[min(max(i, 0), len(l)-1)]
}

// load makes echo calls on every session at once, each session one call
// after another, for d (or, with d 0, calls calls on each), checking each
// answer; it measures each call and the gateway process's CPU.
func (ps *peerSessions) load(tb testing.TB, d time.Duration, calls int) peerRound {
	tb.Helper()
	cpu0 := cpuOf([]int{ps.g.pid})
	lats := make([][]time.Duration, len(ps.css))
	errs := make([]error, len(ps.css))
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(d)
	ctx := testkit.Ctx(tb, d+60*time.Second)
	for i, cs := range ps.css {
		wg.Go(func() {
			for k := 0; d > 0 && time.Now().Before(stop) || d == 0 && k < calls; k++ {
				text := strconv.Itoa(k)
				t0 := time.Now()
				res, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: ps.g.tool, Arguments: map[string]any{"text": text}})
				if err == nil && (res.IsError || len(res.Content) != 1 || res.Content[0].(*gomcp.TextContent).Text != text) {
					err = fmt.Errorf("answer %+v", res)
				}
				if err != nil {
					errs[i] = err
					return
				}
				lats[i] = append(lats[i], time.Since(t0))
			}
		})
	}
	wg.Wait()
	r := peerRound{wall: time.Since(start), cpu: cpuOf([]int{ps.g.pid}) - cpu0}
	for i := range lats {
		if errs[i] != nil {
			tb.Fatalf("%s: session %d: %v", ps.g.name, i, errs[i])
		}
		r.lat = append(r.lat, lats[i]...)
	}
	r.calls = len(r.lat)
	return r
}

// peerResult is a gateway's rounds at one number of sessions.
type peerResult struct {
	rounds []peerRound
}

// median is the median of f over the rounds.
func (p *peerResult) median(f func(peerRound) float64) float64 {
	v := make([]float64, len(p.rounds))
	for i, r := range p.rounds {
		v[i] = f(r)
	}
	return medianOf(v)
}

func medianOf(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func p50(r peerRound) float64 { return float64(r.quantile(0.50).Microseconds()) }
func p99(r peerRound) float64 { return float64(r.quantile(0.99).Microseconds()) }

// measurePeers connects sessions sessions to every gateway, warms them up,
// then runs rounds rounds in which each gateway gets d of load, in an
// order rotated each round; and checks that the echo servers behind each
// gateway received exactly the calls made.
func measurePeers(tb testing.TB, gws []peerGateway, sessions, rounds int, d time.Duration) map[string]*peerResult {
	tb.Helper()
	var all []*peerSessions
	before := map[string]int{}
	for _, g := range gws {
		ps := connectPeer(tb, g, sessions)
		if ir := ps.css[0].InitializeResult(); ir != nil {
			tb.Logf("%s: protocol %s, server %s %s", g.name, ir.ProtocolVersion, ir.ServerInfo.Name, ir.ServerInfo.Version)
		}
		all = append(all, ps)
		before[g.name] = g.received(tb)
	}
	made := map[string]int{}
	for _, ps := range all { // connections, caches, node's JIT
		made[ps.g.name] += ps.load(tb, min(d, time.Second), 0).calls
	}
	out := map[string]*peerResult{}
	for _, g := range gws {
		out[g.name] = &peerResult{}
	}
	for r := range rounds {
		for i := range all {
			ps := all[(i+r)%len(all)]
			res := ps.load(tb, d, 0)
			made[ps.g.name] += res.calls
			out[ps.g.name].rounds = append(out[ps.g.name].rounds, res)
		}
	}
	for _, ps := range all {
		if got := ps.g.received(tb) - before[ps.g.name]; got != made[ps.g.name] {
			tb.Fatalf("the echo servers behind %s received %d calls, want the %d made", ps.g.name, got, made[ps.g.name])
		}
	}
	return out
}

// peersEnv reads a duration or count from the environment.
func peersEnv[T time.Duration | int](tb testing.TB, name string, def T) T {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out T
	switch p := any(&out).(type) {
	case *time.Duration:
		d, err := time.ParseDuration(v)
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		*p = d
	case *int:
		n, err := strconv.Atoi(v)
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		*p = n
	}
	return out
}

// BenchmarkGatewayPeers: Switchboard's gateway against the gateways users
// pick today, each in its own process in front of the same go-sdk stdio
// echo server (testdata/echoserver), spoken to by go-sdk clients over
// Streamable HTTP, 1 and 8 sessions each making one call after another:
//
//   - ours: `switchboard mcp serve -listen ... -mcp-config ... -allow-all`
//   - supergateway 4.0.0: --stateful --outputTransport streamableHttp
//     (a server process per session)
//   - mcp-proxy 6.7.19, its defaults (one server process)
//
// SB_PEERS_ROUNDS rounds (default 3) give each gateway SB_PEERS_ROUND of
// load (default 5s), in an order rotated each round, after a warm-up.
// Reported per gateway, the median over the rounds of: calls/s, p50 and
// p99 latency (µs), and the gateway process's own CPU per call (µs; its
// children, the echo servers, are not counted). The ratios ours/mcp-proxy
// are the medians of each round's ratio. SB_PEERS_BASELINE, a path to
// another switchboard binary, adds it as "before" (the same run's
// baseline of a change); SB_PEERS_ONLY, a comma-separated list of
// names, runs only those. The echo servers' own count of the calls they
// received (a byte per call in a file) checks the arithmetic.
func BenchmarkGatewayPeers(b *testing.B) {
	rounds := peersEnv(b, "SB_PEERS_ROUNDS", 3)
	d := peersEnv(b, "SB_PEERS_ROUND", 5*time.Second)
	starts := []func() peerGateway{
		func() peerGateway { return startOurs(b, "ours", gatewayBin(b)) },
		func() peerGateway { return startMCPProxy(b) },
		func() peerGateway { return startSupergateway(b) },
	}
	if base := os.Getenv("SB_PEERS_BASELINE"); base != "" {
		starts = append(starts, func() peerGateway { return startOurs(b, "before", base) })
	}
	only := os.Getenv("SB_PEERS_ONLY")
	var gws []peerGateway
	for i, start := range starts {
		g := []string{"ours", "mcp-proxy", "supergateway", "before"}[i]
		if only == "" || slices.Contains(strings.Split(only, ","), g) {
			gws = append(gws, start())
		}
	}
	for _, sessions := range []int{1, 8} {
		b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) {
			var res map[string]*peerResult
			for range b.N {
				res = measurePeers(b, gws, sessions, rounds, d)
			}
			for _, g := range gws {
				r := res[g.name]
				b.ReportMetric(r.median(peerRound.perSecond), g.name+"-calls/s")
				b.ReportMetric(r.median(p50), g.name+"-p50-µs")
				b.ReportMetric(r.median(p99), g.name+"-p99-µs")
				b.ReportMetric(r.median(peerRound.cpuPerCall), g.name+"-cpu-µs/call")
			}
			ours, proxy := res["ours"], res["mcp-proxy"]
			if ours == nil || proxy == nil {
				return
			}
			ratio := func(f func(peerRound) float64) float64 {
				v := make([]float64, rounds)
				for i := range rounds {
					v[i] = f(ours.rounds[i]) / f(proxy.rounds[i])
				}
				return medianOf(v)
			}
			if before := res["before"]; before != nil {
				v := make([]float64, rounds)
				for i := range rounds {
					v[i] = ours.rounds[i].cpuPerCall() / before.rounds[i].cpuPerCall()
				}
				b.ReportMetric(medianOf(v), "ours/before-cpu")
			}
			b.ReportMetric(ratio(peerRound.cpuPerCall), "ours/mcp-proxy-cpu")
			b.ReportMetric(ratio(p50), "ours/mcp-proxy-p50")
			b.ReportMetric(ratio(peerRound.perSecond), "ours/mcp-proxy-calls/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// TestGatewayPeersArithmetic: the bookkeeping of BenchmarkGatewayPeers,
// on every gateway at 1 and 3 sessions: the calls counted are the calls
// the echo servers received (measurePeers fails otherwise), each round
// counts what it made, and a fixed number of calls per session is that
// many per session.
func TestGatewayPeersArithmetic(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node processes")
	}
	gws := []peerGateway{startOurs(t, "ours", gatewayBin(t)), startMCPProxy(t), startSupergateway(t)}
	for _, sessions := range []int{1, 3} {
		res := measurePeers(t, gws, sessions, 2, 200*time.Millisecond)
		for _, g := range gws {
			r := res[g.name]
			if len(r.rounds) != 2 {
				t.Fatalf("%s: %d rounds, want 2", g.name, len(r.rounds))
			}
			for _, rd := range r.rounds {
				if rd.calls == 0 || rd.calls != len(rd.lat) || rd.perSecond() <= 0 {
					t.Errorf("%s, %d sessions: round of %d calls, %d latencies, %.0f/s", g.name, sessions, rd.calls, len(rd.lat), rd.perSecond())
				}
			}
		}
		for _, g := range gws {
			ps := connectPeer(t, g, sessions)
			before := g.received(t)
			rd := ps.load(t, 0, 7)
			if rd.calls != 7*sessions {
				t.Errorf("%s: %d calls made, want %d", g.name, rd.calls, 7*sessions)
			}
			if got := g.received(t) - before; got != 7*sessions {
				t.Errorf("%s: the echo servers received %d calls, want %d", g.name, got, 7*sessions)
			}
		}
	}
}
