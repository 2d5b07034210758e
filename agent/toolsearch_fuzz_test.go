package agent_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// FuzzSearchToolArgs feeds arbitrary bytes as the arguments of a
// search_tools call over deferred tools: the run never fails or panics, the
// call gets exactly one result, and a result that is not an error is the
// search's JSON answer.
func FuzzSearchToolArgs(f *testing.F) {
	for _, s := range []string{``, `null`, `{}`, `{"query":"sum"}`, `{"query":""}`, `{"query":"x","limit":0}`,
		`{"query":"x","limit":1e9}`, `{"query":"create entities","limit":20}`, `{"query":1}`, `[1]`, "\xff", `{"query":"工具 ÄÖ"}`} {
		f.Add(s)
	}
	sets := serverTools(f, 20, 20, nil)
	f.Fuzz(func(t *testing.T, args string) {
		model := llm.NewScripted(llm.Calls(llm.CallTool("c1", "search_tools", args)), llm.Say("done"))
		a := newAgent(t, agent.Config{Model: model, Toolsets: sets, Context: agent.ContextConfig{Window: 200_000}})
		s := a.NewSession()
		if _, err := s.Run(testkit.Ctx(t, 10*time.Second), "search"); err != nil {
			t.Fatalf("run failed: %v", err)
		}
		hist := s.History()
		checkOneResultPerCall(t, hist)
		res := lastResults(hist)
		if len(res) != 1 {
			t.Fatalf("%d results", len(res))
		}
		if !res[0].IsError {
			body := res[0].Content
			start, end := strings.IndexByte(body, '\n'), strings.LastIndexByte(body, '\n')
			var out struct {
				Tools []json.RawMessage `json:"tools"`
			}
			if start < 0 || end <= start || json.Unmarshal([]byte(body[start+1:end]), &out) != nil || len(out.Tools) > 20 {
				t.Fatalf("search answer is not its JSON: %q", body)
			}
		}
	})
}
