package a2a

import (
	"strings"
	"testing"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// TestChunker: preamble text of a turn that ended in tool calls is
// replaced by the answer's first chunk; the answer's chunks append and
// the last one carries lastChunk.
func TestChunker(t *testing.T) {
	tests := []struct {
		name  string
		min   int
		turns [][]string // deltas per turn; the last turn is the answer
		want  []string   // "R:" replace, "A:" append, "L" suffix for lastChunk
	}{
		{"one piece", -1, [][]string{{"hello ", "world"}}, []string{"R:hello world L"}},
		{"short answer", 256, [][]string{{"hi"}}, []string{"R:hi L"}},
		{"chunked", 4, [][]string{{"aa ", "bb ", "cc ", "dd"}}, []string{"R:aa ", "A:bb ", "A:cc ", "A:dd L"}},
		{"preamble replaced", 4, [][]string{{"let me ", "look "}, {"found ", "it"}}, []string{"R:let me ", "R:found ", "A:it L"}},
	}
	for _, tc := range tests {
		ch := &chunker{ec: &a2asrv.ExecutorContext{TaskID: "t", ContextID: "c"}, id: "a", min: tc.min}
		var got []string
		show := func(ev *a2ago.TaskArtifactUpdateEvent) {
			s := "R:"
			if ev.Append {
				s = "A:"
			}
			s += partsText(ev.Artifact)
			if ev.LastChunk {
				s += " L"
			}
			got = append(got, s)
		}
		var answer string
		for i, deltas := range tc.turns {
			ch.turn()
			answer = strings.Join(deltas, "")
			for _, d := range deltas {
				if ev := ch.text(d); ev != nil {
					show(ev)
				}
			}
			if i == len(tc.turns)-1 {
				show(ch.final(answer))
			}
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
