package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// buildDemo is the demo binary, compiled once for the package's tests.
func buildDemo(t *testing.T) string {
	t.Helper()
	return testkit.GoBinary(t, ".")
}

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.RemoveBinaries()
	os.Exit(code)
}

// TestDemoEndToEnd runs the demo binary offline, as a newcomer would, and
// checks that its output names each step of the mission.
func TestDemoEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the demo binary")
	}
	bin := buildDemo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-step", "20ms")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"Model: scripted (offline, deterministic; not a real model)",
		"-model env",
		"bus: embedded NATS server running in-process",
		`mcp: server "files" ready, 4 tools`,
		"skills: 1 loaded (report-writer)",
		`a2a: agent "researcher" served over JSON-RPC and HTTP+JSON`,
		`a2a: peer "researcher" resolved from its agent card`,
		"→ mcp__files__read_file",
		"✓ activate_skill",
		"→ a2a__researcher",
		"↻ retry: a2a/researcher failed transiently",
		"mcp__files__index_files 100%",
		"a2a__researcher remote task working: search_sources: searched RFC archive",
		"! failure handled: invalid_arguments",
		"? permission: allow mcp__files__write_file",
		"approved automatically (not a terminal)",
		"✓ mcp__files__write_file",
		"■ Answer",
		"## Research findings",
		"Summary: 6 tool calls",
		"1 failure handled",
		"1 transient failure retried",
		"tokens out (0 reasoning), cost $0.000",
		"at openai/gpt-4o-mini's price)",
		"durable: a run asks whether it may publish, and parks",
		"no goroutine waits",
		`inbox: "`,
		"answering: accept",
		"resumed the run here: The report is published.",
		"Last prompt:",
		"tool definitions",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

// TestDemoJSON: -json prints the run's events as JSON lines, ending with
// the final answer.
func TestDemoJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the demo binary")
	}
	bin := buildDemo(t)
	out, err := exec.Command(bin, "-json", "-step", "10ms", "-inject=false").Output()
	if err != nil {
		t.Fatalf("demo -json: %v", err)
	}
	var last agent.Event
	types := map[agent.EventType]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
			t.Fatalf("not a JSON event line: %q: %v", sc.Text(), err)
		}
		types[last.Type]++
	}
	if last.Type != agent.EventFinal || types[agent.EventToolStarted] != 6 || types[agent.EventToolProgress] == 0 {
		t.Fatalf("events: %v, last %s", types, last.Type)
	}
}

// TestDemoRejectsUnknownModel: a bad flag value is a clear error.
func TestDemoRejectsUnknownModel(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), options{model: "gpt-9"}, &out, strings.NewReader(""), &out)
	if err == nil || !strings.Contains(err.Error(), `-model "gpt-9": want scripted or env`) {
		t.Fatalf("err = %v", err)
	}
}

// TestCostLine: the summary's cost is computed from the answer's usage and
// the agent's prices, and says when it is unknown.
func TestCostLine(t *testing.T) {
	scripted := &world{}
	real := &world{model: llm.NewScripted()}
	for _, tc := range []struct {
		w    *world
		ans  *agent.Answer
		want string
	}{
		{scripted, &agent.Answer{Usage: llm.Usage{InputTokens: 3205, CacheReadTokens: 5, OutputTokens: 104, ReasoningTokens: 4},
			Cost: llm.Cost{USD: llm.Dollars(0.00054315)}},
			"3205 tokens in (5 cached), 104 tokens out (4 reasoning), cost $0.00054315 (the scripted model's estimated tokens at openai/gpt-4o-mini's price)"},
		{real, &agent.Answer{Usage: llm.Usage{InputTokens: 1, OutputTokens: 1}, Cost: llm.Cost{Unpriced: 2}},
			"1 token in (0 cached), 1 token out (0 reasoning), cost unknown"},
		{scripted, nil, "cost unknown"},
	} {
		if got := tc.w.costLine(tc.ans); got != tc.want {
			t.Errorf("costLine = %q, want %q", got, tc.want)
		}
	}
	// The scripted model's price is looked up, not written down.
	p, ok := scripted.prices().Lookup(llm.NewScripted().Name())
	if want, _ := llm.DefaultPrices().Lookup(pricedAs); !ok || p.Input != want.Input || p.Output != want.Output {
		t.Errorf("the scripted model's price %+v, want %s's", p, pricedAs)
	}
	if real.prices() != nil {
		t.Error("a real model's prices are not the defaults")
	}
}
