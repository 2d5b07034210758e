package agent_test

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The helpers of BenchmarkAgentToolCallTelemetry: a deterministic tenth
// sampler input, interleaved blocks, quantiles.

// sampledEvery is the sampling period of the benchmark's provider: one run
// in sampledEvery is sampled (ParentBased(TraceIDRatioBased(1/sampledEvery))).
const sampledEvery = 10

// tenthIDs is an IDGenerator whose trace IDs make TraceIDRatioBased(0.1)
// sample exactly every tenth root span (the first of each ten), instead of
// a random tenth: a block of runs then holds the same number of sampled
// runs every time, so the binomial spread of a random sampler (about 1.3
// sampled runs in a block of 20, where a sampled run costs far more than
// an unsampled one) does not enter the measurement. The expected cost is
// the same as the random sampler's. The other bits are a counter hashed by
// splitmix64, so IDs stay distinct and well spread.
type tenthIDs struct{ roots, spans atomic.Uint64 }

// ratioBound is TraceIDRatioBased's bound for 1/sampledEvery: a trace is
// sampled when the last 8 bytes of its ID, shifted right by one, are below.
const ratioBound = uint64(float64(1<<63) / sampledEvery)

// mix64 is splitmix64's finaliser.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// NewIDs implements sdktrace.IDGenerator.
func (g *tenthIDs) NewIDs(context.Context) (trace.TraceID, trace.SpanID) {
	n := g.roots.Add(1)
	h := mix64(n)
	low := ratioBound + h%(1<<63-ratioBound) // not sampled
	if n%sampledEvery == 1 {
		low = h % ratioBound // sampled
	}
	var tid trace.TraceID
	binary.BigEndian.PutUint64(tid[:8], n)
	binary.BigEndian.PutUint64(tid[8:], low<<1)
	return tid, g.spanID()
}

// NewSpanID implements sdktrace.IDGenerator.
func (g *tenthIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return g.spanID() }

func (g *tenthIDs) spanID() trace.SpanID {
	var sid trace.SpanID
	binary.BigEndian.PutUint64(sid[:], mix64(g.spans.Add(1))|1)
	return sid
}

// samplingProvider is a tracer provider as production runs one: a batch
// span processor behind a parent-based 10% ratio sampler, exporting to exp.
// Its trace IDs come from tenthIDs: exactly one run in ten is sampled.
func samplingProvider(exp sdktrace.SpanExporter) *sdktrace.TracerProvider {
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithIDGenerator(&tenthIDs{}),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(1.0/sampledEvery))))
}

// schedule is round r of the benchmark's interleaving of variants
// (0 the baseline): for each other variant a pair of blocks, the baseline
// and it, in an order of variants that rotates with r, the baseline
// first in one run of variants-1 rounds and second in the next. Over a
// cycle (cycle(variants) rounds) each variant takes every place in the
// round twice and goes first in half of its pairs, so neither its place
// nor the block before it favours a variant.
func schedule(r, variants int) [][2]int {
	n := variants - 1
	pairs := make([][2]int, 0, n)
	for k := range n {
		v := 1 + (r+k)%n
		if (r/n)%2 == 0 {
			pairs = append(pairs, [2]int{0, v})
		} else {
			pairs = append(pairs, [2]int{v, 0})
		}
	}
	return pairs
}

// cycle is the number of rounds after which schedule repeats.
func cycle(variants int) int { return 2 * (variants - 1) }

// blockCPU runs fn n times as one timed block and returns the process's
// CPU time it took (every goroutine's: the guards', the batch span
// processor's). The heap is collected first, outside the timing, so that
// every block starts from the same GC state, and the collector is off
// during the block (gcOff): a collection costs about 1.4 ms here (the
// test binary's live heap), a third of a block, and would fall in one
// block or the next by chance; each block's garbage is collected before
// the next block instead, untimed. The collector's share is reported
// apart (gcShare), with the bytes each variant allocates.
func blockCPU(n int, fn func()) time.Duration {
	runtime.GC()
	start := quietCPUTime()
	for range n {
		fn()
	}
	return quietCPUTime() - start
}

// quietCPUTime is cpuTime once the process's other threads have gone to
// sleep. The kernel brings a thread's CPU time up to date when it stops
// running (and the caller's at the call), but a thread running on another
// core is counted only up to its last scheduler tick (4 ms at HZ=250): a
// short pause lets the guard workers, the collector's workers and the
// scheduler's spinning threads park first. With one P (-cpu 1) no other
// thread runs Go code and there is nothing to wait for.
func quietCPUTime() time.Duration {
	if runtime.GOMAXPROCS(0) > 1 {
		time.Sleep(quietPause)
	}
	return cpuTime()
}

// quietPause is how long quietCPUTime lets the other threads park.
const quietPause = time.Millisecond

// gcOff turns the collector off for the benchmark (blockCPU collects
// itself) and returns the function that restores it.
func gcOff() func() {
	old := debug.SetGCPercent(-1)
	return func() { debug.SetGCPercent(old) }
}

// gcShare is the collector's share of the CPU time while fn runs n times
// with the collector on (the runtime's own estimate, runtime/metrics).
func gcShare(n int, fn func()) float64 {
	samples := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/user:cpu-seconds"}}
	read := func() (gc, user float64) {
		metrics.Read(samples)
		return samples[0].Value.Float64(), samples[1].Value.Float64()
	}
	gc0, user0 := read()
	for range n {
		fn()
	}
	gc1, user1 := read()
	return (gc1 - gc0) / (gc1 - gc0 + user1 - user0)
}

// quantile is the q-quantile (0..1) of xs, linearly interpolated between
// the closest ranks; NaN for no values.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

// loadAverage is the machine's one-minute load average (/proc/loadavg),
// reported with the figures it was measured under; false where unknown.
func loadAverage() (float64, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	f, _, _ := strings.Cut(string(b), " ")
	v, err := strconv.ParseFloat(f, 64)
	return v, err == nil
}

// bytesPerRun is the memory fn allocates per call, over n calls.
func bytesPerRun(n int, fn func()) float64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		fn()
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
}
