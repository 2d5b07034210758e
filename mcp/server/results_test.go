package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
)

// TestStructuredContent: the one JSON part of a result that is an object
// is also the result's structuredContent, as it came (the bytes are not
// decoded and encoded again on the way); arrays, null, broken JSON and a
// second JSON part are text only. Checking that it is an object allocates
// next to nothing, whatever its size (it decoded the whole object before).
func TestStructuredContent(t *testing.T) {
	var big strings.Builder
	big.WriteString("{")
	for i := range 200 {
		if i > 0 {
			big.WriteString(",")
		}
		fmt.Fprintf(&big, `"k%d":{"v":[%d,"x"]}`, i, i)
	}
	big.WriteString("}")
	tests := []struct {
		name  string
		parts []string // the JSON parts
		want  string   // structuredContent, "" for none
	}{
		{"an object", []string{`{"a":1}`}, `{"a":1}`},
		{"an object after spaces", []string{" \n{\"a\":1}"}, " \n{\"a\":1}"},
		{"a large object", []string{big.String()}, big.String()},
		{"an array", []string{`[1]`}, ""},
		{"null", []string{`null`}, ""},
		{"broken", []string{`{"a":`}, ""},
		{"two objects", []string{`{"a":1}`, `{"b":2}`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &agent.Result{}
			for _, p := range tt.parts {
				r.Parts = append(r.Parts, agent.Part{Type: agent.PartJSON, JSON: json.RawMessage(p)})
			}
			out := toMCPResult(r)
			var got string
			if out.StructuredContent != nil {
				got = string(out.StructuredContent.(json.RawMessage))
			}
			if got != tt.want {
				t.Fatalf("structuredContent %q, want %q", got, tt.want)
			}
			if len(out.Content) != len(tt.parts) {
				t.Fatalf("%d content parts, want %d", len(out.Content), len(tt.parts))
			}
		})
	}
	r := &agent.Result{Parts: []agent.Part{{Type: agent.PartJSON, JSON: json.RawMessage(big.String())}}}
	if n := testing.AllocsPerRun(20, func() { toMCPResult(r) }); n > 10 {
		t.Fatalf("%v allocations to map a 200-key object, want at most 10", n)
	}
}
