package testkit

import (
	"slices"
	"testing"
	"time"
)

// CompareRatio runs raw and viaBus for b.N operations each, alternating in
// chunks of 20 so that both see the same machine load (this box is shared),
// and reports the mean cost of each and their ratio. The ratio is the
// median of the per-chunk ratios: a burst of load from other processes
// skews a few chunks, not the result.
func CompareRatio(b *testing.B, raw, viaBus func(n int)) {
	b.Helper()
	const chunk = 20
	raw(min(b.N, 200)) // warm both paths up
	viaBus(min(b.N, 200))
	var rawD, busD time.Duration
	var ratios []float64
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(chunk, b.N-done)
		t0 := time.Now()
		raw(n)
		t1 := time.Now()
		viaBus(n)
		t2 := time.Now()
		rawD += t1.Sub(t0)
		busD += t2.Sub(t1)
		if t1.Sub(t0) > 0 {
			ratios = append(ratios, float64(t2.Sub(t1))/float64(t1.Sub(t0)))
		}
		done += n
	}
	b.StopTimer()
	slices.Sort(ratios)
	median := 0.0
	if len(ratios) > 0 {
		median = ratios[len(ratios)/2]
	}
	b.ReportMetric(float64(rawD.Nanoseconds())/float64(b.N), "raw-ns/op")
	b.ReportMetric(float64(busD.Nanoseconds())/float64(b.N), "bus-ns/op")
	b.ReportMetric(median, "bus/raw")
}
