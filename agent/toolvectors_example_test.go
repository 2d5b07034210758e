package agent_test

import (
	"context"
	"fmt"

	"github.com/switchboard-dev/switchboard/agent"
)

// A query in other words than the tool's: with an embedder (here a
// deterministic one; openai.NewEmbedder and the like in a program) the
// search finds the tool by meaning.
func ExampleToolIndex_WithEmbedder() {
	defs := []agent.ToolSpec{
		{Name: "mcp__fs__read_file", Description: "Read a file's contents"},
		{Name: "mcp__fs__delete_file", Description: "Delete a file"},
		{Name: "mcp__fs__list_directory", Description: "List a directory"},
	}
	ix := agent.NewToolIndex(defs, nil).WithEmbedder(&conceptEmbedder{}, nil)
	for _, m := range ix.SearchContext(context.Background(), "wipe it", 1) {
		fmt.Println(m.Name, "-", m.Why)
	}
	// Output:
	// mcp__fs__delete_file - similar in meaning
}
