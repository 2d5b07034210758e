package a2a

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// benchServerEnv, set in a child copy of the test binary, makes it serve
// one benchmark server instead of running tests (see TestMain).
const benchServerEnv = "SWITCHBOARD_A2A_BENCH_SERVER"

// benchTarget is a server under load: its JSON-RPC URL and its process.
type benchTarget struct {
	name string
	url  string
	pid  int
}

// benchStats is what the load generator saw of one server.
type benchStats struct {
	requests int
	elapsed  time.Duration
	lat      []time.Duration
	cpu      time.Duration // the server process's CPU time during the load
}

func (s *benchStats) perSecond() float64 { return float64(s.requests) / s.elapsed.Seconds() }

func (s *benchStats) cpuPerRequest() float64 {
	return float64(s.cpu.Microseconds()) / float64(s.requests)
}

// quantile is the q-quantile of the latencies (nearest rank).
func (s *benchStats) quantile(q float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	l := slices.Clone(s.lat)
	slices.Sort(l)
	i := int(q*float64(len(l))+0.5) - 1
	return l[min(max(i, 0), len(l)-1)]
}

func (s *benchStats) add(o *benchStats) {
	s.requests += o.requests
	s.elapsed += o.elapsed
	s.lat = append(s.lat, o.lat...)
	s.cpu += o.cpu
}

// userHZ is the unit of utime and stime in /proc/<pid>/stat (USER_HZ, 100
// on every Linux ABI).
const userHZ = 100

// procCPU is a process's user plus system CPU time so far.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: fields start
	// after the last ')'. utime and stime are fields 14 and 15.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("malformed /proc stat")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("malformed /proc stat")
	}
	return time.Duration(u+s) * time.Second / userHZ, nil
}

// loadFor sends SendMessage from benchClients clients to t for d and
// measures every request and the server's CPU.
func loadFor(tb testing.TB, t benchTarget, d time.Duration) *benchStats {
	hc, done := benchHTTPClient()
	defer done()
	cpu0, err := procCPU(t.pid)
	if err != nil {
		tb.Fatal(err)
	}
	var next atomic.Int64
	var failed atomic.Value
	lats := make([][]time.Duration, benchClients)
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(d)
	for c := range benchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				t0 := time.Now()
				if err := sendOne(hc, t.url, next.Add(1)); err != nil {
					failed.Store(err)
					return
				}
				lats[c] = append(lats[c], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, err := procCPU(t.pid)
	if err != nil {
		tb.Fatal(err)
	}
	if err, ok := failed.Load().(error); ok {
		tb.Fatalf("%s: %v", t.name, err)
	}
	st := &benchStats{elapsed: elapsed, cpu: cpu1 - cpu0}
	for _, l := range lats {
		st.lat = append(st.lat, l...)
	}
	st.requests = len(st.lat)
	return st
}

// warmUp loads every server briefly (connections, caches, node's JIT).
func warmUp(tb testing.TB, servers []benchTarget, d time.Duration) {
	for _, s := range servers {
		loadFor(tb, s, min(d, 500*time.Millisecond))
	}
}

// measureInterleaved runs rounds rounds in which each server gets d of
// load, in an order rotated each round so that each server takes every
// position.
func measureInterleaved(tb testing.TB, servers []benchTarget, rounds int, d time.Duration) map[string]*benchStats {
	out := map[string]*benchStats{}
	for _, s := range servers {
		out[s.name] = &benchStats{}
	}
	for r := range rounds {
		for i := range servers {
			s := servers[(i+r)%len(servers)]
			out[s.name].add(loadFor(tb, s, d))
		}
	}
	return out
}

// startBenchChild runs a copy of the test binary serving one benchmark
// server (see serveBench).
func startBenchChild(tb testing.TB, kind string) benchTarget {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchServerEnv+"="+kind)
	port := testkit.StartListening(tb, cmd)
	return benchTarget{name: kind, url: "http://127.0.0.1:" + port + "/", pid: cmd.Process.Pid}
}

// startBenchNode runs the @a2a-js/sdk 1.3.0 echo server.
func startBenchNode(tb testing.TB) benchTarget {
	cmd := exec.Command("node", "bench-js-server.mjs")
	cmd.Dir = npmDir
	port := testkit.StartListening(tb, cmd)
	return benchTarget{name: "js", url: "http://127.0.0.1:" + port + "/a2a/jsonrpc", pid: cmd.Process.Pid}
}

// serveBench is the child's main: it serves the benchmark server kind on
// a loopback port, prints it, and returns when stdin closes. With
// SWITCHBOARD_A2A_BENCH_CPUPROFILE=path set, it writes a CPU profile to
// path.<kind>.
func serveBench(kind string) error {
	var tb benchTB
	var h http.Handler
	switch kind {
	case "ours":
		srv, err := NewServer(context.Background(), ServerConfig{Agent: echoAgent(&tb)})
		if err != nil {
			return err
		}
		defer srv.Close()
		h = srv
	case "a2ago":
		// a2a-go's default stack (its gob-copying store and task manager)
		// around the same agent executor.
		basis, err := NewServer(context.Background(), ServerConfig{Agent: echoAgent(&tb)})
		if err != nil {
			return err
		}
		defer basis.Close()
		h = a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(&executor{s: basis}, a2asrv.WithLogger(basis.slogger())))
	default:
		return fmt.Errorf("unknown benchmark server %q", kind)
	}
	if tb.err != nil {
		return tb.err
	}
	if p := os.Getenv("SWITCHBOARD_A2A_BENCH_CPUPROFILE"); p != "" {
		f, err := os.Create(p + "." + kind)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(slog.NewTextHandler(io.Discard, nil), slog.LevelError)}
	go func() { _ = hs.Serve(ln) }()
	fmt.Printf("LISTENING %d\n", ln.Addr().(*net.TCPAddr).Port)
	_, _ = io.Copy(io.Discard, os.Stdin)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return hs.Shutdown(ctx)
}

// benchTB lets echoAgent run outside a test.
type benchTB struct {
	testing.TB
	err error
}

func (b *benchTB) Fatal(args ...any) { b.err = errors.New(fmt.Sprint(args...)) }

// TestBenchArithmetic checks the benchmark's bookkeeping against servers
// that count the requests they answer: the requests, rate and latencies
// it reports per server are those each server received, interleaving
// gives each server the same time, sendLoad and abbaLoad send exactly
// what they say, and the CPU reading moves with work done.
func TestBenchArithmetic(t *testing.T) {
	var counts [3]atomic.Int64
	var targets []benchTarget
	for i := range counts {
		hs := countingEcho(t, &counts[i])
		targets = append(targets, benchTarget{name: fmt.Sprint("s", i), url: hs, pid: os.Getpid()})
	}
	const d = 60 * time.Millisecond
	warmUp(t, targets, d)
	for i := range counts {
		counts[i].Store(0) // the warm-up is not measured
	}
	res := measureInterleaved(t, targets, 3, d)
	for i, tg := range targets {
		st := res[tg.name]
		if got := counts[i].Load(); st.requests == 0 || int64(st.requests) != got {
			t.Errorf("%s: reported %d requests, the server answered %d", tg.name, st.requests, got)
		}
		if len(st.lat) != st.requests {
			t.Errorf("%s: %d latencies for %d requests", tg.name, len(st.lat), st.requests)
		}
		if st.elapsed < 3*d || st.elapsed > 3*d+2*time.Second {
			t.Errorf("%s: measured for %v, want about %v", tg.name, st.elapsed, 3*d)
		}
		if want := float64(st.requests) / st.elapsed.Seconds(); st.perSecond() != want {
			t.Errorf("%s: %v req/s, want %v", tg.name, st.perSecond(), want)
		}
		if st.quantile(0.5) > st.quantile(0.99) || st.quantile(0.99) <= 0 {
			t.Errorf("%s: p50 %v, p99 %v", tg.name, st.quantile(0.5), st.quantile(0.99))
		}
	}
	t.Run("exact loads", func(t *testing.T) {
		counts[0].Store(0)
		counts[1].Store(0)
		sendLoad(t, targets[0].url, 37)
		if got := counts[0].Load(); got != 37 {
			t.Fatalf("sendLoad(37) sent %d", got)
		}
		counts[0].Store(0)
		tA, tB := abbaLoad(t, targets[0].url, targets[1].url, 25)
		a, b := counts[0].Load(), counts[1].Load()
		if a != 50 || b != 50 {
			t.Fatalf("abbaLoad(25) sent %d and %d, want 50 each", a, b)
		}
		if got, want := abbaNsPerOp(tA, 25), float64(tA.Nanoseconds())/float64(a); got != want {
			t.Errorf("ns/op %v, want %v (time over the requests sent)", got, want)
		}
		if got, want := abbaNsPerOp(tB, 25), float64(tB.Nanoseconds())/float64(b); got != want {
			t.Errorf("ns/op %v, want %v (time over the requests sent)", got, want)
		}
	})
	t.Run("quantile", func(t *testing.T) {
		s := &benchStats{}
		for i := 100; i >= 1; i-- {
			s.lat = append(s.lat, time.Duration(i)*time.Millisecond)
		}
		if s.quantile(0.5) != 50*time.Millisecond || s.quantile(0.99) != 99*time.Millisecond || s.quantile(1) != 100*time.Millisecond {
			t.Fatalf("p50 %v p99 %v p100 %v", s.quantile(0.5), s.quantile(0.99), s.quantile(1))
		}
	})
	t.Run("cpu", func(t *testing.T) {
		// Spinning must show as CPU time, in USER_HZ ticks, and no more
		// than the wall time spent times the CPUs.
		c0, err := procCPU(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for {
			for end := time.Now().Add(10 * time.Millisecond); time.Now().Before(end); {
			}
			c1, err := procCPU(os.Getpid())
			if err != nil {
				t.Fatal(err)
			}
			if d := c1 - c0; d >= 50*time.Millisecond {
				if limit := time.Since(start) * time.Duration(runtime.NumCPU()); d > limit+20*time.Millisecond {
					t.Fatalf("%v of CPU read in %v of wall time", d, time.Since(start))
				}
				return
			}
			if time.Since(start) > 20*time.Second {
				t.Fatalf("20 s of spinning read as %v of CPU", c1-c0)
			}
		}
	})
}

// countingEcho answers SendMessage as a completed echo and counts.
func countingEcho(t *testing.T, n *atomic.Int64) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		n.Add(1)
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"task":{"status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"parts":[{"text":"echo: hello"}]}]}}}`)
	})}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "http://" + ln.Addr().String() + "/"
}
