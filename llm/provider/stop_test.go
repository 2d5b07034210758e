package provider

import (
	"testing"

	"github.com/switchboard-dev/switchboard/llm"
)

// TestStopSequences: each provider sends the request's stop sequences in
// its own wire field, and sends none when there are none.
func TestStopSequences(t *testing.T) {
	cases := []struct {
		name  string
		final string
		model func(*testing.T, *provider) llm.Model
		field string
	}{
		{"openai", openAIFinal, newTestOpenAI, "stop"},
		{"anthropic", anthropicFinal, newTestAnthropic, "stop_sequences"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, stops := range [][]string{{"\n\nHuman:", "END"}, nil} {
				p := newProvider(t, reply{200, "application/json", []byte(tc.final)})
				m := tc.model(t, p)
				if _, err := m.Generate(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}},
					StopSequences: stops}); err != nil {
					t.Fatal(err)
				}
				body := p.requests()[0].body
				got := path(body, tc.field)
				if stops == nil {
					if got != nil {
						t.Fatalf("%s sent without stop sequences: %v", tc.field, got)
					}
					continue
				}
				if path(body, tc.field, 0) != stops[0] || path(body, tc.field, 1) != stops[1] {
					t.Fatalf("%s = %v, want %q", tc.field, got, stops)
				}
			}
		})
	}
}
