package worker

import (
	"encoding/json"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
)

// TestLiveness: what a worker's heartbeat listener concludes, step by
// step: nothing is an orphan before it has heard itself and listened for
// the timeout; a listed run is alive until the timeout after its last
// listing; a gap in its own heartbeats (a reconnect) makes it wait again;
// a full table makes it judge nothing. It runs on synctest's clock: the
// listener reads time.Now, so the steps are exact however busy the machine.
func TestLiveness(t *testing.T) { synctest.Test(t, testLiveness) }

func testLiveness(t *testing.T) {
	const after = 200 * time.Millisecond
	s := &Server{cfg: ServeConfig{ID: "me"}, log: zerolog.Nop()}
	l := &liveness{s: s, after: after, interval: 30 * time.Millisecond, since: time.Now(), until: map[string]time.Time{}}
	beat := func(worker string, runs ...string) {
		data, _ := json.Marshal(beatWire{V: 1, Worker: worker, IntervalMS: 30, Runs: runs})
		l.onBeat(&nats.Msg{Data: data})
	}
	// listen is d of this worker's own heartbeats, every interval.
	listen := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(l.interval) {
			beat("me")
		}
		beat("me")
	}
	steps := []struct {
		name   string
		do     func()
		run    string
		orphan bool
	}{
		{"before its own heartbeat", func() {}, "run_x", false},
		{"heard itself, not listened long", func() { beat("me") }, "run_x", false},
		{"listened long enough", func() { listen(after) }, "run_x", true},
		{"a run another worker lists", func() { beat("w2", "run_y") }, "run_y", false},
		{"listed a moment ago", func() { listen(after / 2) }, "run_y", false},
		{"unlisted for the timeout", func() { listen(after) }, "run_y", true},
		{"after a gap in its own heartbeats", func() { time.Sleep(10 * l.interval); beat("me") }, "run_x", false},
		{"listened long enough again", func() { listen(after) }, "run_x", true},
		{"a full table", func() {
			runs := make([]string, 0, maxBeatRuns)
			for i := 0; len(l.until) < maxTracked; i++ {
				runs = append(runs, fmt.Sprint("run_", i))
				if len(runs) == maxBeatRuns {
					beat("w3", runs...)
					runs = runs[:0]
				}
			}
			beat("w3", "run_more")
		}, "run_x", false},
	}
	for _, st := range steps {
		st.do()
		if got := l.orphaned(st.run, time.Now()); got != st.orphan {
			t.Fatalf("%s: orphaned(%s) = %v, want %v", st.name, st.run, got, st.orphan)
		}
	}
}

// TestStability: a run is stable once seen at one revision for the time
// asked, and a new revision starts over.
func TestStability(t *testing.T) {
	var st stability
	t0 := time.Now()
	for _, tc := range []struct {
		rev  uint64
		at   time.Duration
		want bool
	}{{3, 0, false}, {3, 50 * time.Millisecond, false}, {3, 100 * time.Millisecond, true}, {4, 150 * time.Millisecond, false},
		{4, 260 * time.Millisecond, true}} {
		if got := st.stableFor(tc.rev, t0.Add(tc.at), 100*time.Millisecond); got != tc.want {
			t.Errorf("revision %d at %s: %v, want %v", tc.rev, tc.at, got, tc.want)
		}
	}
}
