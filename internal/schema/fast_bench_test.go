package schema

import (
	"os"
	"testing"
	"time"
)

// BenchmarkValidate times Validate on a valid answer, small (a weather
// reading, 31 bytes) and large (an invoice of 20 lines, 2.2 KB), through
// the fast pass and, in the same loop, through the full validator
// (decoding the instance and walking the compiled schema), and reports
// the ratio.
func BenchmarkValidate(b *testing.B) {
	inv, err := os.ReadFile("testdata/invoice.json")
	if err != nil {
		b.Fatal(err)
	}
	invSchema, err := os.ReadFile("testdata/invoice.schema.json")
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ name, schema, instance string }{
		{"small", `{"type":"object","properties":{"city":{"type":"string"},"temp_c":{"type":"number"}},"required":["city","temp_c"],"additionalProperties":false}`,
			`{"city": "Paris", "temp_c": 21}`},
		{"large", string(invSchema), string(inv)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := NewCache()
			schema, instance := []byte(tc.schema), []byte(tc.instance)
			e := c.entry(schema)
			if !e.hasFast || !e.fast.valid(instance) {
				b.Fatal("the fast pass does not confirm the instance")
			}
			var fast, full time.Duration
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				if err := c.Validate(schema, instance); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				if err := validateFull(e.s, instance); err != nil {
					b.Fatal(err)
				}
				fast, full = fast+mid.Sub(start), full+time.Since(mid)
			}
			n := float64(b.N)
			b.ReportMetric(float64(fast.Nanoseconds())/n, "fast-ns/op")
			b.ReportMetric(float64(full.Nanoseconds())/n, "full-ns/op")
			b.ReportMetric(float64(full)/float64(fast), "full/fast")
		})
	}
}
