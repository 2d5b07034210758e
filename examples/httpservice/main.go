// Command httpservice embeds a Switchboard agent in a net/http service that
// streams each run's events to the client as server-sent events.
//
//	go run ./examples/httpservice -addr 127.0.0.1:8080
//	curl -N -d 'What time is it in Tokyo?' http://127.0.0.1:8080/run
//
// Each request runs the agent; every event of the run (turns, tool calls,
// progress, handled failures, the answer) is one SSE message whose event
// name is the event type and whose data is the event as JSON. A client that
// disconnects cancels its run.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/otelenv"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/anthropic"
	"github.com/switchboard-dev/switchboard/llm/provider/openai"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	defer otelenv.Main(ctx, "example-httpservice", os.Stderr)() // the OTEL_* environment's traces and metrics (none when unset)

	ln, err := net.Listen("tcp", *addr) // first: a taken port is the one line printed
	if err != nil {
		log.Fatal(err)
	}
	model, err := provider.FromEnv(openai.Provider(), anthropic.Provider())
	if err != nil {
		log.Printf("no provider configured (%v); using the scripted model", err)
		model = scriptedClock()
	}
	a, err := newAgent(ctx, model)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Addr: *addr, Handler: newHandler(a), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Printf("listening on http://%s (POST /run)", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// clockTool tells the time in a time zone.
func clockTool() agent.Tool {
	type in struct {
		Zone string `json:"zone"`
	}
	return agent.TypedTool(agent.ToolSpec{Name: "get_time", Description: "The current time in an IANA time zone.", ReadOnly: true,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"zone":{"type":"string"}},"required":["zone"]}`)},
		func(ctx context.Context, args in) (string, error) {
			loc, err := time.LoadLocation(args.Zone)
			if err != nil {
				return "", fmt.Errorf("unknown time zone %q", args.Zone)
			}
			return time.Now().In(loc).Format("15:04 MST"), nil
		})
}

// scriptedClock is the offline model: it asks for the time, then answers.
func scriptedClock() llm.Model {
	return llm.NewCyclic(
		llm.Calls(llm.CallTool("t1", "get_time", map[string]string{"zone": "Asia/Tokyo"})),
		llm.SummarizeResults("Here is the time"),
	)
}

func newAgent(ctx context.Context, model llm.Model) (*agent.Agent, error) {
	return agent.New(ctx, agent.Config{Model: model, Tools: []agent.Tool{clockTool()},
		Instructions: "Answer questions about the time. Use get_time."})
}

// newHandler serves POST /run: the body is the input; the answer streams
// back as server-sent events.
func newHandler(a *agent.Agent) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /run", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		input := strings.TrimSpace(string(body))
		if err != nil || input == "" {
			http.Error(w, "the request body must be the question (1 byte to 64 KiB of text)", http.StatusBadRequest)
			return
		}
		flusher, ok := w.(http.Flusher)
		if !ok {
			http.Error(w, "streaming unsupported", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		// r.Context() ends when the client goes away: the run is cancelled.
		for ev, err := range a.Stream(r.Context(), input) {
			name, v := string(ev.Type), any(ev)
			if err != nil {
				name, v = "error", map[string]string{"error": failureText(err)}
			}
			data, _ := json.Marshal(v)
			if _, werr := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data); werr != nil {
				return // the client left; returning cancels the run
			}
			flusher.Flush()
		}
	})
	return mux
}

// failureText is what a client may see of a run's failure.
func failureText(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", " ")
}
