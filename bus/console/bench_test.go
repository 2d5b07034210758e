package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/console"
)

// latencies records one receiver's delay per event, keyed by the event's
// publish time (unix nanoseconds).
type latencies struct {
	mu sync.Mutex
	d  map[int64]time.Duration
}

func (l *latencies) add(pub int64, at time.Time) {
	l.mu.Lock()
	if l.d == nil {
		l.d = map[int64]time.Duration{}
	}
	if _, ok := l.d[pub]; !ok {
		l.d[pub] = at.Sub(time.Unix(0, pub))
	}
	l.mu.Unlock()
}

func (l *latencies) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.d)
}

func (l *latencies) quantile(q float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	ds := make([]time.Duration, 0, len(l.d))
	for _, d := range l.d {
		ds = append(ds, d)
	}
	slices.Sort(ds)
	if len(ds) == 0 {
		return 0
	}
	return ds[min(len(ds)-1, int(q*float64(len(ds))))]
}

// observer records, in the page, when each tools_changed node of the
// timeline appears, with the event's publish time that its text carries.
const observer = `(() => {
  window.__arrivals = [];
  new MutationObserver((ms) => {
    const now = performance.timeOrigin + performance.now();
    for (const m of ms) for (const n of m.addedNodes) {
      if (n.dataset && n.dataset.type === 'tools_changed') {
        const x = n.textContent.match(/toolset (\d+) changed/);
        if (x) window.__arrivals.push([x[1], now]);
      }
    }
  }).observe(document.getElementById('timeline'), { childList: true, subtree: true });
  return true;
})()`

// BenchmarkPublishToPage publishes run events on the bus at 50 a second
// and measures, in the same run, each event's delay from its publish to a
// subscriber of the bus (the baseline), to the console's event stream
// (an HTTP client reading the run page's SSE), and to its node on the run
// page in Chromium (a MutationObserver), and reports the p50 and p99 of
// each and what the page adds to the bus's p99.
//
//	go test -run '^$' -bench BenchmarkPublishToPage -benchtime 1x ./bus/console/
func BenchmarkPublishToPage(b *testing.B) {
	const rate, perLoop = 50, 250
	tab := newTab(b)
	e := newEnv(b, console.Config{})
	const run = "run_latency"
	e.b.Emit(e.ctx, agent.Event{Type: agent.EventRunStarted, Run: run, Agent: "bench", Text: "latency", Time: time.Now()})
	if err := chromedp.Do(tab, chromedp.Navigate(e.srv.URL+"/#/run/"+run), chromedp.WaitVisible(`#timeline li[data-type="run_started"]`)); err != nil {
		b.Fatal(err)
	}
	if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](observer)); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	var busL, sseL, pageL latencies
	sub, err := e.b.SubscribeEvents(ctx, run)
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() {
		for ev, err := range sub.All(ctx) {
			if err == nil && ev.Type == agent.EventToolsChanged {
				if pub, err := strconv.ParseInt(ev.Toolset, 10, 64); err == nil {
					busL.add(pub, time.Now())
				}
			}
		}
	})
	stream := e.sse(b, ctx, "/api/runs/"+run+"/events")
	wg.Go(func() {
		for m := range stream {
			at := time.Now()
			var ev agent.Event
			if json.Unmarshal([]byte(m.Data), &ev) == nil && ev.Type == agent.EventToolsChanged {
				if pub, err := strconv.ParseInt(ev.Toolset, 10, 64); err == nil {
					sseL.add(pub, at)
				}
			}
		}
	})
	sent := 0
	for b.Loop() {
		tick := time.NewTicker(time.Second / rate)
		for range perLoop {
			<-tick.C
			now := time.Now()
			e.b.Emit(e.ctx, agent.Event{Type: agent.EventToolsChanged, Run: run, Agent: "bench", Time: now, Toolset: strconv.FormatInt(now.UnixNano(), 10)})
			sent++
		}
		tick.Stop()
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		arr, err := chromedp.Run(tab, chromedp.Evaluate[[][2]any](`window.__arrivals`))
		if err != nil {
			b.Fatal(err)
		}
		for _, a := range arr {
			pub, _ := strconv.ParseInt(fmt.Sprint(a[0]), 10, 64)
			ms, _ := a[1].(float64)
			pageL.add(pub, time.UnixMilli(0).Add(time.Duration(ms*float64(time.Millisecond))))
		}
		if (pageL.len() >= sent && sseL.len() >= sent && busL.len() >= sent) || time.Now().After(deadline) {
			break
		}
		pageL = latencies{}
		time.Sleep(100 * time.Millisecond) // polls the page's count: a condition, with a deadline
	}
	if pageL.len() < sent || sseL.len() < sent || busL.len() < sent {
		b.Fatalf("received %d on the page, %d on the stream, %d on the bus, of %d", pageL.len(), sseL.len(), busL.len(), sent)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(busL.quantile(0.5)), "bus-p50-ms")
	b.ReportMetric(ms(busL.quantile(0.99)), "bus-p99-ms")
	b.ReportMetric(ms(sseL.quantile(0.5)), "sse-p50-ms")
	b.ReportMetric(ms(sseL.quantile(0.99)), "sse-p99-ms")
	b.ReportMetric(ms(pageL.quantile(0.5)), "page-p50-ms")
	b.ReportMetric(ms(pageL.quantile(0.99)), "page-p99-ms")
	b.ReportMetric(ms(pageL.quantile(0.99)-busL.quantile(0.99)), "page-added-p99-ms")
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// storedConsole is a console over n stored runs on a NATS server of its
// own (a child process, so that the server's caches are not counted),
// with its index caught up, and the heap it holds.
type storedConsole struct {
	c    *console.Console
	srv  *httptest.Server
	n    int
	heap uint64
}

func newStoredConsole(b *testing.B, n int) *storedConsole {
	b.Helper()
	ctx := context.Background()
	u := console.NatsChild(b)
	pub, err := bus.New(ctx, bus.Config{URLs: []string{u}, Name: "publisher"})
	if err != nil {
		b.Fatal(err)
	}
	console.StoreRuns(b, pub, n)
	_ = pub.Close()
	bb, err := bus.New(ctx, bus.Config{URLs: []string{u}, Name: "console"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = bb.Close() })
	before := heapInUse()
	c, err := console.New(ctx, console.Config{Bus: bb, NoLiveQuestions: true})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	select {
	case <-c.CaughtUp():
	case <-time.After(2 * time.Minute):
		b.Fatal("the index did not catch up in 2 minutes")
	}
	srv := httptest.NewServer(c.Handler())
	b.Cleanup(func() { srv.Close(); _ = c.Close() })
	sc := &storedConsole{c: c, srv: srv, n: n}
	for range 5 {
		sc.api(b)
	}
	if after := heapInUse(); after > before {
		sc.heap = after - before
	}
	return sc
}

// api fetches the first page of the runs list.
func (sc *storedConsole) api(b *testing.B) {
	res, err := http.Get(sc.srv.URL + "/api/runs")
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), `"state":"done"`) {
		b.Fatalf("runs page: %d %.200s", res.StatusCode, body)
	}
}

// open loads the runs page in the browser until its rows are shown.
func (sc *storedConsole) open(b *testing.B, tab context.Context) {
	rows := min(sc.n, 50)
	if err := chromedp.Do(tab, chromedp.Navigate("about:blank"), chromedp.Navigate(sc.srv.URL+"/#/"),
		chromedp.WaitVisible(fmt.Sprintf(`#runs tr:nth-child(%d)[data-state="done"]`, rows))); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRunsPage opens the runs page (its first page: 50 runs, or the
// 10 there are) with 10 and with 5,000 stored runs, in the same run: in
// Chromium (navigation to the rows shown) and through the API alone. It
// reports each, their difference and ratio, and the console's heap in each
// case (the heap after GC once started, caught up and five pages served,
// minus the heap before console.New).
//
//	go test -run '^$' -bench BenchmarkRunsPage -benchtime 50x ./bus/console/
func BenchmarkRunsPage(b *testing.B) {
	small := newStoredConsole(b, 10)
	large := newStoredConsole(b, 5000)
	tab := newTab(b)
	var apiSmall, apiLarge, pageSmall, pageLarge time.Duration
	for b.Loop() {
		t0 := time.Now()
		small.api(b)
		t1 := time.Now()
		large.api(b)
		t2 := time.Now()
		small.open(b, tab)
		t3 := time.Now()
		large.open(b, tab)
		t4 := time.Now()
		apiSmall, apiLarge, pageSmall, pageLarge = apiSmall+t1.Sub(t0), apiLarge+t2.Sub(t1), pageSmall+t3.Sub(t2), pageLarge+t4.Sub(t3)
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / n }
	b.ReportMetric(ms(pageSmall), "page-ms@10")
	b.ReportMetric(ms(pageLarge), "page-ms@5000")
	b.ReportMetric(ms(pageLarge)-ms(pageSmall), "page-added-ms")
	b.ReportMetric(ms(apiSmall), "api-ms@10")
	b.ReportMetric(ms(apiLarge), "api-ms@5000")
	b.ReportMetric(float64(small.heap)/1024, "KiB-heap@10")
	b.ReportMetric(float64(large.heap)/1024, "KiB-heap@5000")
	b.ReportMetric(float64(large.heap)/float64(max(small.heap, 1)), "heap-ratio")
}
