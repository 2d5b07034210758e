package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// benchInvoice is a typed answer of a realistic size: an invoice of 20
// lines (2.2 KB of indented JSON).
func benchInvoice() (*llm.Output, string) {
	type line struct {
		Item     string  `json:"item"`
		Quantity int     `json:"quantity"`
		Price    float64 `json:"price"`
	}
	type invoice struct {
		Number   string  `json:"number"`
		Customer string  `json:"customer"`
		Currency string  `json:"currency"`
		Lines    []line  `json:"lines"`
		Total    float64 `json:"total"`
		Note     string  `json:"note,omitempty"`
	}
	out, err := agent.OutputFor[invoice]()
	if err != nil {
		panic(err)
	}
	inv := invoice{Number: "F-2026-0117", Customer: "ACME Logistics GmbH", Currency: "EUR"}
	for i := range 20 {
		inv.Lines = append(inv.Lines, line{Item: fmt.Sprintf("pallet of item %d, shrink-wrapped", i), Quantity: i + 1, Price: 12.5})
		inv.Total += float64(i+1) * 12.5
	}
	b, _ := json.MarshalIndent(inv, "", "  ")
	return out, string(b)
}

// weatherAnswer is a small typed answer (31 bytes).
func weatherAnswer() (*llm.Output, string) {
	return weatherOutput(), `{"city": "Paris", "temp_c": 21}`
}

// chatServer is a local server speaking OpenAI's chat completions stream
// (the wire format of platform.openai.com/docs/api-reference/chat-streaming):
// it answers every request at once with text, in chunks of 16 bytes, as a
// model that takes no time to think.
func chatServer(b *testing.B, text string) string {
	var body strings.Builder
	chunk := func(delta, finish string) {
		c := map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini",
			"choices": []map[string]any{{"index": 0, "delta": map[string]any{"content": delta}, "finish_reason": nil}}}
		if finish != "" {
			c["choices"] = []map[string]any{{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}
			c["usage"] = map[string]any{"prompt_tokens": 120, "completion_tokens": len(text) / 4, "total_tokens": 120 + len(text)/4}
		}
		j, _ := json.Marshal(c)
		fmt.Fprintf(&body, "data: %s\n\n", j)
	}
	for i := 0; i < len(text); i += 16 {
		chunk(text[i:min(i+16, len(text))], "")
	}
	chunk("", "stop")
	body.WriteString("data: [DONE]\n\n")
	stream := body.String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.Error(w, "this server speaks chat completions only", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, stream)
	}))
	b.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// BenchmarkTypedAnswer measures what a typed answer costs its turn, for
// a small answer (weather, 31 bytes) and a large one (an invoice of 20
// lines, 2.2 KB), with two models that take no time to answer: the
// scripted model in the process ("inproc") and the OpenAI provider against
// a local server that writes a prepared stream of the answer at once
// ("http").
//
// A turn's non-model time is the wall time of a one-turn run (Agent.Run,
// from the call to its return) whose model answers at once: everything in
// it is the agent's own work (session, history, prompt, events, the final
// answer) and, for "http", the provider's (the request's encoding, the
// HTTP exchange over loopback, the stream's decoding) plus the local
// server's copying of its prepared stream. "inproc" is the floor of a
// turn's non-model time, "http" a real provider's.
//
// In one loop it runs the turn without Config.Output (the baseline: the
// denominator, the turn's non-model time without validation), the same
// turn typed, and the validation of the answer alone (CheckAnswer, what
// the typed run does with the answer's text). "validate/turn" is the
// validation's time over the baseline turn's (issue 29's goal: at most
// 0.05); "typed/baseline-1" is all the typed turn adds (the validation and
// the schema: a note in the system prompt for the scripted model, the
// request's response_format for OpenAI, which enforces it).
func BenchmarkTypedAnswer(b *testing.B) {
	for _, model := range []string{"inproc", "http"} {
		for _, size := range []string{"small", "large"} {
			b.Run(model+"/"+size, func(b *testing.B) {
				out, answer := weatherAnswer()
				if size == "large" {
					out, answer = benchInvoice()
				}
				benchTyped(b, model, out, answer)
			})
		}
	}
}

func benchTyped(b *testing.B, model string, out *llm.Output, answer string) {
	mk := func(o *llm.Output) *agent.Agent {
		var m llm.Model = llm.NewCyclic(llm.Say(answer))
		if model == "http" {
			m = openAIModel(b, chatServer(b, answer))
		}
		a, err := agent.New(context.Background(), agent.Config{Model: m, Output: o, Permissions: agent.AllowAll()})
		if err != nil {
			b.Fatal(err)
		}
		return a
	}
	base, typed := mk(nil), mk(out)
	ctx := context.Background()
	run := func(a *agent.Agent, wantData bool) time.Duration {
		start := time.Now()
		ans, err := a.Run(ctx, "read it")
		d := time.Since(start)
		if err != nil || (len(ans.Data) > 0) != wantData || ans.Text != answer {
			b.Fatalf("run: %v, %+v", err, ans)
		}
		return d
	}
	var tB, tT, tV time.Duration
	b.ReportAllocs()
	for b.Loop() {
		tB += run(base, false)
		tT += run(typed, true)
		start := time.Now()
		if _, err := agent.CheckAnswer(typed, out, answer); err != nil {
			b.Fatal(err)
		}
		tV += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tB.Nanoseconds())/n, "baseline-ns/turn")
	b.ReportMetric(float64(tT.Nanoseconds())/n, "typed-ns/turn")
	b.ReportMetric(float64(tV.Nanoseconds())/n, "validate-ns/answer")
	b.ReportMetric(float64(tV)/float64(tB), "validate/turn")
	b.ReportMetric(float64(tT)/float64(tB)-1, "typed/baseline-1")
}
