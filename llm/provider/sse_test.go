package provider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/llm"
)

func parseAll(chunks ...string) []sseEvent {
	var evs []sseEvent
	p := sseParser{emit: func(e sseEvent) { evs = append(evs, e) }}
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
		want   []sseEvent
	}{
		{"openai data lines", []string{"data: {\"a\":1}\n\ndata: [DONE]\n\n"},
			[]sseEvent{{Data: `{"a":1}`}, {Data: "[DONE]"}}},
		{"named events, no space after colon", []string{"event: ping\ndata:{}\n\n"}, []sseEvent{{Name: "ping", Data: "{}"}}},
		{"CRLF split between chunks", []string{"data: x\r", "\n\r", "\ndata: y\r\n\r\n"}, []sseEvent{{Data: "x"}, {Data: "y"}}},
		{"bare CR line ends", []string{"data: x\r\rdata: y\r\r"}, []sseEvent{{Data: "x"}, {Data: "y"}}},
		{"multi-line data joins with newlines", []string{"data: a\ndata: b\n\n"}, []sseEvent{{Data: "a\nb"}}},
		{"comments, id, retry and unknown fields ignored", []string{": keep-alive\nid: 7\nretry: 10\nfoo: bar\ndata: z\n\n"}, []sseEvent{{Data: "z"}}},
		{"event without data is not dispatched", []string{"event: x\n\ndata: y\n\n"}, []sseEvent{{Data: "y"}}},
		{"unterminated last event is dispatched at close", []string{"data: tail"}, []sseEvent{{Data: "tail"}}},
		{"one byte at a time", strings.Split("event: e\ndata: 12\n\n", ""), []sseEvent{{Name: "e", Data: "12"}}},
		{"field with no colon", []string{"data\n\n"}, []sseEvent{{Data: ""}}},
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
	long := strings.Repeat("x", maxSSELine+10)
	got := parseAll("data: "+long[:maxSSELine/2], long[maxSSELine/2:]+"\n\n", "data: ok\n\n")
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

// FuzzOpenAIStream feeds arbitrary bytes to the OpenAI stream assembler: it
// must not panic, the text it streams must be the text it keeps, and every
// tool call it returns must have non-empty Args.
func FuzzOpenAIStream(f *testing.F) {
	f.Add(fixture(f, "openai_stream_tools.sse"))
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"x\"}}]}}]}\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":-1,\"id\":\"a\"},{\"id\":\"b\"},{\"id\":\"b\"}]}}]}\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var streamed strings.Builder
		s := newOpenAIStream(func(d string) { streamed.WriteString(d) })
		s.feed(in)
		s.close()
		out := &llm.Response{}
		s.apply(out)
		if out.Message.Text != streamed.String() {
			t.Fatalf("kept %q, streamed %q", out.Message.Text, streamed.String())
		}
		for _, c := range out.Message.ToolCalls {
			if len(c.Args) == 0 {
				t.Fatalf("call %+v has no args", c)
			}
		}
	})
}

// FuzzAnthropicStream does the same for the Anthropic stream assembler.
func FuzzAnthropicStream(f *testing.F) {
	f.Add(fixture(f, "anthropic_stream_tools.sse"))
	f.Add(fixture(f, "anthropic_stream_search.sse"))
	f.Add([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":5,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n"))
	f.Add([]byte("data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":null}}\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var streamed strings.Builder
		s := newAnthropicStream(func(d string) { streamed.WriteString(d) })
		s.parser.Feed(in)
		s.parser.Close()
		out := s.response()
		if out.Message.Text != streamed.String() {
			t.Fatalf("kept %q, streamed %q", out.Message.Text, streamed.String())
		}
		for _, c := range out.Message.ToolCalls {
			if len(c.Args) == 0 {
				t.Fatalf("call %+v has no args", c)
			}
		}
		if p := out.Message.Provider; p != nil && !json.Valid(p) {
			t.Fatalf("provider blocks are not JSON: %q", p)
		}
		if _, err := json.Marshal(anthropicMessages([]llm.Message{out.Message})); err != nil {
			t.Fatalf("the answer cannot be sent back: %v", err)
		}
	})
}

// compareBench runs baseline and subject once each per iteration,
// alternating so that both see the same load on a shared machine, and
// reports both costs and their ratio.
func compareBench(b *testing.B, baseName string, baseline func(), name string, subject func()) {
	b.Helper()
	baseline()
	subject()
	var baseD, subD time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		baseline()
		t1 := time.Now()
		subject()
		subD += time.Since(t1)
		baseD += t1.Sub(t0)
	}
	baseNs := float64(baseD.Nanoseconds()) / float64(b.N)
	subNs := float64(subD.Nanoseconds()) / float64(b.N)
	b.ReportMetric(baseNs, baseName+"-ns/op")
	b.ReportMetric(subNs, name+"-ns/op")
	b.ReportMetric(subNs/baseNs, name+"/"+baseName)
}

// BenchmarkSSE compares the incremental parser (fed in 512-byte reads, as a
// network body arrives) with a bufio.Scanner line split of the same stream
// (langchaingo's approach, which does not assemble events), and reports
// the ratio.
func BenchmarkSSE(b *testing.B) {
	stream := bytes.Repeat(fixture(b, "openai_stream_tools.sse"), 20)
	compareBench(b, "scanner", func() {
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
		p := sseParser{emit: func(sseEvent) { n++ }}
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

// BenchmarkOpenAIStreamAssembly measures parsing and assembling a whole
// streamed turn (text, two interleaved tool calls, usage) against only
// JSON-decoding its chunks, the floor any assembler pays, and reports the
// ratio.
func BenchmarkOpenAIStreamAssembly(b *testing.B) {
	stream := fixture(b, "openai_stream_tools.sse")
	var datas [][]byte
	for _, e := range parseAll(string(stream)) {
		if e.Data != "[DONE]" {
			datas = append(datas, []byte(e.Data))
		}
	}
	compareBench(b, "decode", func() {
		for _, d := range datas {
			var c openAIChunk
			if err := json.Unmarshal(d, &c); err != nil {
				b.Fatal(err)
			}
		}
	}, "assemble", func() {
		s := newOpenAIStream(func(string) {})
		s.feed(stream)
		s.close()
		out := &llm.Response{}
		s.apply(out)
		if len(out.Message.ToolCalls) != 2 {
			b.Fatal(fmt.Sprint(out.Message.ToolCalls))
		}
	})
}
