package bus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/llm"
)

// benchCheckpoint is a checkpoint of a run six turns in: ten messages,
// tool calls and results, about 3 KB of JSON.
func benchCheckpoint(run string) *agent.Checkpoint {
	var msgs []llm.Message
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Text: "Summarise the notes and mail them to the team."})
	for i := range 3 {
		id := fmt.Sprint("c", i)
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: id, Name: "mcp__files__read", Args: json.RawMessage(`{"path":"notes.txt"}`)}}},
			llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: id, Name: "mcp__files__read", Content: strings.Repeat("notes line ", 60)}}})
	}
	return &agent.Checkpoint{Run: run, Session: "bench", Agent: "bench", Owner: "o1", State: "running",
		Input: msgs[0].Text, Messages: msgs, Turn: 4, Usage: llm.Usage{InputTokens: 1200, OutputTokens: 300},
		ToolCalls: 3, Started: time.Now()}
}

// rawStream creates a file-storage stream for raw publishes, on the same
// server as the store (one message per subject kept, as the store's
// buckets do).
func rawStream(tb testing.TB, ctx context.Context, b *bus.Bus) string {
	tb.Helper()
	_, err := b.JetStream().CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "RAWBENCH", Subjects: []string{"rawbench.>"},
		Storage: jetstream.FileStorage, MaxMsgsPerSubject: 1})
	if err != nil {
		tb.Fatal(err)
	}
	return "rawbench.cp"
}

// BenchmarkCheckpoint writes one run checkpoint with the JetStream store
// (SaveCheckpoint: encode, one publish with the expected last subject
// sequence, its ack) against a raw nats.go JetStream publish-with-ack of
// the same encoded bytes to a stream with the same storage, on the same
// server, alternating in one run. The bound is store/raw <= 2.
func BenchmarkCheckpoint(b *testing.B) {
	bb := newBus(b, bus.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s, err := bus.OpenStore(ctx, bb, bus.StoreConfig{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	cp := benchCheckpoint("r1")
	data, _ := json.Marshal(cp)
	b.SetBytes(int64(len(data)))
	js := bb.JetStream()
	subject := rawStream(b, ctx, bb)
	raw := func(n int) {
		for range n {
			if _, err := js.Publish(ctx, subject, data); err != nil {
				b.Fatal(err)
			}
		}
	}
	rev, err := s.SaveCheckpoint(ctx, cp, 0)
	if err != nil {
		b.Fatal(err)
	}
	viaStore := func(n int) {
		for range n {
			cp.Turn++
			if rev, err = s.SaveCheckpoint(ctx, cp, rev); err != nil {
				b.Fatal(err)
			}
		}
	}
	compare(b, raw, viaStore)
}

// TestCheckpointIsOneRoundTrip checks the benchmark's arithmetic: a
// checkpoint written after the previous one in this process costs the
// connection one message out and one in (the publish and its ack), and the
// server stores one message per checkpoint, of about the record's size.
func TestCheckpointIsOneRoundTrip(t *testing.T) {
	b := newBus(t, bus.Config{})
	ctx := ctxT(t, 30*time.Second)
	s, err := bus.OpenStore(ctx, b, bus.StoreConfig{Name: "count"})
	if err != nil {
		t.Fatal(err)
	}
	cp := benchCheckpoint("r1")
	rev, err := s.SaveCheckpoint(ctx, cp, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, err := b.JetStream().Stream(ctx, "KV_COUNT_RUNS")
	if err != nil {
		t.Fatal(err)
	}
	info0, _ := st.Info(ctx)
	before := b.Conn().Stats()
	const n = 50
	for range n {
		cp.Turn++
		if rev, err = s.SaveCheckpoint(ctx, cp, rev); err != nil {
			t.Fatal(err)
		}
	}
	after := b.Conn().Stats()
	info, _ := st.Info(ctx)
	if out, in := after.OutMsgs-before.OutMsgs, after.InMsgs-before.InMsgs; out != n || in != n {
		t.Errorf("%d checkpoints sent %d messages and received %d, want %d and %d", n, out, in, n, n)
	}
	if got := info.State.LastSeq - info0.State.LastSeq; got != n {
		t.Errorf("the server stored %d messages for %d checkpoints", got, n)
	}
	if info.State.Msgs != 1 {
		t.Errorf("the runs bucket holds %d messages for one run, want 1 (only the latest checkpoint)", info.State.Msgs)
	}
	data, _ := json.Marshal(cp)
	if sent := after.OutBytes - before.OutBytes; sent < uint64(n*len(data)) || sent > uint64(n*(len(data)+200)) {
		t.Errorf("%d checkpoints of %d bytes sent %d bytes", n, len(data), sent)
	}
}
