package agent_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/internal/toolsearch"
)

// TestToolIndexRanksAsTheEvaluation: over the evaluation's corpus, with
// the tools as the mcp package lists them (titles, provenance) and their
// servers' instructions, NewToolIndex ranks every evaluation task's tools
// exactly as the evaluation's index does (toolsearch's eval_test: each
// tool's name, title, description, schema, server and instructions), so
// its figures are what an agent's search_tools gives.
func TestToolIndexRanksAsTheEvaluation(t *testing.T) {
	tools, instructions := corpus(t)
	docs := make([]toolsearch.Doc, len(tools))
	for i, tl := range tools {
		s := tl.Source.Name
		docs[i] = toolsearch.Doc{Name: tl.Name, Title: tl.Title, Description: tl.Description, Schema: tl.InputSchema,
			Server: s, Instructions: instructions[s]}
	}
	tasks := evalSet(t).Tasks
	eval, ix := toolsearch.New(docs), agent.NewToolIndex(tools, instructions)
	for _, tk := range tasks {
		var want []string
		for _, h := range eval.Search(tk.Task, 10) {
			want = append(want, tools[h.Doc].Name)
		}
		if got := names(ix.Search(tk.Task, 10)); !slices.Equal(got, want) {
			t.Errorf("%q:\n got %s\nwant %s", tk.Task, strings.Join(got, " "), strings.Join(want, " "))
		}
	}
}
