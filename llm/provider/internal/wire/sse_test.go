package wire

import (
	"bufio"
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

func parseAll(chunks ...string) []SSEEvent {
	var evs []SSEEvent
	p := SSEParser{Emit: func(e SSEEvent) { evs = append(evs, e) }}
	for _, c := range chunks {
		p.Feed([]byte(c))
	}
	p.Close()
	return evs
}

func TestSSEParser(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   []SSEEvent
	}{
		{"openai data lines", []string{"data: {\"a\":1}\n\ndata: [DONE]\n\n"},
			[]SSEEvent{{Data: `{"a":1}`}, {Data: "[DONE]"}}},
		{"named events, no space after colon", []string{"event: ping\ndata:{}\n\n"}, []SSEEvent{{Name: "ping", Data: "{}"}}},
		{"CRLF split between chunks", []string{"data: x\r", "\n\r", "\ndata: y\r\n\r\n"}, []SSEEvent{{Data: "x"}, {Data: "y"}}},
		{"bare CR line ends", []string{"data: x\r\rdata: y\r\r"}, []SSEEvent{{Data: "x"}, {Data: "y"}}},
		{"multi-line data joins with newlines", []string{"data: a\ndata: b\n\n"}, []SSEEvent{{Data: "a\nb"}}},
		{"comments, id, retry and unknown fields ignored", []string{": keep-alive\nid: 7\nretry: 10\nfoo: bar\ndata: z\n\n"}, []SSEEvent{{Data: "z"}}},
		{"event without data is not dispatched", []string{"event: x\n\ndata: y\n\n"}, []SSEEvent{{Data: "y"}}},
		{"unterminated last event is dispatched at close", []string{"data: tail"}, []SSEEvent{{Data: "tail"}}},
		{"one byte at a time", strings.Split("event: e\ndata: 12\n\n", ""), []SSEEvent{{Name: "e", Data: "12"}}},
		{"field with no colon", []string{"data\n\n"}, []SSEEvent{{Data: ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseAll(tt.chunks...); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("events = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSSELineTooLong(t *testing.T) {
	long := strings.Repeat("x", MaxSSELine+10)
	got := parseAll("data: "+long[:MaxSSELine/2], long[MaxSSELine/2:]+"\n\n", "data: ok\n\n")
	if len(got) != 1 || got[0].Data != "ok" {
		t.Errorf("after an over-long line: %d events (%.20q)", len(got), got)
	}
}

// FuzzSSEParser checks that the parser never panics and that how the bytes
// are chunked never changes the events.
func FuzzSSEParser(f *testing.F) {
	f.Add([]byte("data: {\"a\":1}\n\ndata: [DONE]\n\n"), uint8(3))
	f.Add([]byte("event: x\r\ndata: y\r\n\r\n: c\rdata: z\r\r"), uint8(1))
	f.Add([]byte("data"), uint8(7))
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		whole := parseAll(string(in))
		n := int(step%16) + 1
		var chunks []string
		for b := in; len(b) > 0; {
			k := min(n, len(b))
			chunks = append(chunks, string(b[:k]))
			b = b[k:]
		}
		if split := parseAll(chunks...); !reflect.DeepEqual(whole, split) {
			t.Fatalf("chunking by %d changed the events:\n%q\n%q", n, whole, split)
		}
	})
}

// BenchmarkSSE compares the incremental parser (fed in 512-byte reads, as a
// network body arrives) with a bufio.Scanner line split of the same stream
// (langchaingo's approach, which does not assemble events), and reports
// the ratio.
func BenchmarkSSE(b *testing.B) {
	stream := bytes.Repeat(providertest.Fixture(b, "../../openai/testdata/openai_stream_tools.sse"), 20)
	providertest.CompareBench(b, "scanner", func() {
		n := 0
		sc := bufio.NewScanner(bytes.NewReader(stream))
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data:") {
				n++
			}
		}
		if n == 0 {
			b.Fatal("no events")
		}
	}, "parser", func() {
		n := 0
		p := SSEParser{Emit: func(SSEEvent) { n++ }}
		for c := stream; len(c) > 0; {
			k := min(512, len(c))
			p.Feed(c[:k])
			c = c[k:]
		}
		p.Close()
		if n == 0 {
			b.Fatal("no events")
		}
	})
}
