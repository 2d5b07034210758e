package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/redact"
)

// tracer prints a readable trace of a run. Events from the run's stream,
// progress from the bus and questions from the elicitation responder all
// print through it, so lines never interleave.
type tracer struct {
	mu    sync.Mutex
	w     io.Writer
	color bool
	json  bool
	// progress bars already drawn, by call id, to print only changes, and
	// the fraction and label of each call's last bar.
	bars     map[string]string
	barFrac  map[string]float64
	barLabel map[string]string

	calls, failures, retries, asks int
	// prompt is the breakdown of the last model turn's prompt.
	prompt *agent.ContextInfo
}

func newTracer(w io.Writer, color, jsonMode bool) *tracer {
	return &tracer{w: w, color: color, json: jsonMode, bars: map[string]string{},
		barFrac: map[string]float64{}, barLabel: map[string]string{}}
}

func (t *tracer) paint(code, s string) string {
	if !t.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// say prints a line of the demo's own narration.
func (t *tracer) say(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.json {
		return
	}
	fmt.Fprintf(t.w, format+"\n", args...)
}

// step prints a setup step.
func (t *tracer) step(format string, args ...any) {
	t.say("%s %s", t.paint("36", "●"), fmt.Sprintf(format, args...))
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// event prints one run event.
func (t *tracer) event(ev agent.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.json {
		b, _ := json.Marshal(ev)
		fmt.Fprintf(t.w, "%s\n", b)
		return
	}
	switch ev.Type {
	case agent.EventRunStarted:
		fmt.Fprintf(t.w, "\n%s %s\n  %s\n", t.paint("1", "▶ Task"), t.paint("2", "("+ev.Run+")"), ev.Text)
	case agent.EventTurnStarted:
		t.prompt = ev.Context
		fmt.Fprintf(t.w, "%s\n", t.paint("2", fmt.Sprintf("── model turn %d ──", ev.Turn)))
	case agent.EventModelReasoning:
		fmt.Fprintf(t.w, "  %s %s\n", t.paint("2", "thinking:"), t.paint("2", oneLine(redact.Redact(ev.Text), 200)))
	case agent.EventModelTurn:
		if ev.Text != "" {
			fmt.Fprintf(t.w, "  %s %s\n", t.paint("35", "model:"), oneLine(ev.Text, 200))
		}
	case agent.EventToolStarted:
		t.calls++
		fmt.Fprintf(t.w, "  %s %s %s %s\n", t.paint("33", "→"), t.paint("1", ev.Call.Tool), oneLine(string(ev.Call.Args), 70),
			t.paint("2", "["+ev.Call.Source.String()+"]"))
	case agent.EventToolFinished:
		mark, code := "✓", "32"
		if ev.Result != nil && ev.Result.IsError {
			mark, code = "✗", "31"
		} else if f, ok := t.barFrac[ev.Call.ID]; ok && f < 1 {
			// The server's last progress report can arrive after its
			// result (go-sdk handles notifications asynchronously) and is
			// then dropped: a call that succeeded completes its bar.
			t.drawBar(ev.Call.ID, t.barLabel[ev.Call.ID], 1, "done")
		}
		fmt.Fprintf(t.w, "  %s %s %s %s\n", t.paint(code, mark), ev.Call.Tool, t.paint("2", fmt.Sprintf("(%s)", ev.Call.Elapsed.Round(time.Millisecond))),
			oneLine(ev.Result.Text(), 110))
	case agent.EventFailure:
		t.failures++
		f := ev.Failure
		what := "reported to the model"
		if f.Action == "abort" {
			what = "the run ends"
		}
		fmt.Fprintf(t.w, "  %s %s from %s%s, %s: %s\n", t.paint("31", "! failure handled:"), f.Kind, f.Source, nameSuffix(f.Name),
			what, oneLine(f.Message, 140))
	case agent.EventToolsChanged:
		fmt.Fprintf(t.w, "  %s tools of %s changed\n", t.paint("36", "↻"), ev.Toolset)
	case agent.EventFinal:
		fmt.Fprintf(t.w, "\n%s\n%s\n", t.paint("1;32", "■ Answer"), ev.Text)
	}
}

func nameSuffix(n string) string {
	if n == "" {
		return ""
	}
	return "/" + n
}

// progress draws a progress bar for a call, from a bus progress report.
func (t *tracer) progress(call, label string, p agent.Progress) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.json {
		return
	}
	if p.Total <= 0 {
		// Unknown total (a remote task's status): a step, not a bar.
		line := fmt.Sprintf("    %s %s %s", t.paint("36", "⋯"), label, oneLine(p.Message, 80))
		if t.bars[call] != line {
			t.bars[call] = line
			fmt.Fprintln(t.w, line)
		}
		return
	}
	frac := 0.0
	if p.Total > 0 {
		frac = p.Progress / p.Total
	}
	t.drawBar(call, label, frac, p.Message)
}

// drawBar draws a call's bar at frac (0 to 1) unless it is already drawn.
func (t *tracer) drawBar(call, label string, frac float64, msg string) {
	const width = 24
	frac = min(max(frac, 0), 1)
	filled := int(frac * width)
	bar := strings.Repeat("█", filled) + strings.Repeat("░", width-filled)
	line := fmt.Sprintf("    %s %s %3.0f%% %s", t.paint("36", bar), label, frac*100, oneLine(msg, 60))
	if t.bars[call] == line {
		return
	}
	t.bars[call], t.barFrac[call], t.barLabel[call] = line, frac, label
	fmt.Fprintln(t.w, line)
}

// retry notes a transient failure being retried by the policy.
func (t *tracer) retry(source string, err error, delay time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.retries++
	if t.json {
		return
	}
	fmt.Fprintf(t.w, "  %s %s failed transiently (%s); retrying in %s\n", t.paint("33", "↻ retry:"), source,
		oneLine(err.Error(), 80), delay.Round(time.Millisecond))
}

// ask prints a permission question and its answer.
func (t *tracer) ask(question, answer string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.asks++
	if t.json {
		return
	}
	fmt.Fprintf(t.w, "  %s %s → %s\n", t.paint("35", "? permission:"), question, answer)
}

// promptBreakdown prints what the last model turn's prompt was made of.
func (t *tracer) promptBreakdown() {
	t.mu.Lock()
	p := t.prompt
	t.mu.Unlock()
	if p == nil {
		return
	}
	t.say("%s %d tokens (estimated) of a %d-token window: system %d, skills catalog %d, tool definitions %d (%d tools), history %d, tool results %d",
		t.paint("1", "Last prompt:"), p.Prompt, p.Window, p.System, p.Skills, p.Tools, p.ToolsDefined, p.History, p.ToolResults)
}
