package agent

import (
	"strings"

	"github.com/switchboard-dev/switchboard/agent/internal/toolsearch"
	"github.com/switchboard-dev/switchboard/llm"
)

// ToolIndex finds tools by what a task says: BM25F over each tool's name,
// description and parameters (names, descriptions and enum values at any
// depth) with English stemming, compound product names kept whole, a boost
// for the tools of a server the query names, and pseudo-relevance
// feedback. It is the search behind search_tools, usable on its own:
//
//	ix := agent.NewToolIndex(defs)
//	for _, m := range ix.Search("open a pull request", 5) {
//		fmt.Println(m.Name, m.Why)
//	}
//
// A ToolIndex is immutable and safe for concurrent use.
type ToolIndex struct {
	defs    []llm.ToolDef
	servers []string
	ix      *toolsearch.Index
}

// ToolMatch is one tool a [ToolIndex.Search] found: its name, score, and
// why it matched (the query's words it matched, stemmed).
type ToolMatch struct {
	Name  string
	Score float64
	Why   string
}

// NewToolIndex indexes defs. A tool named mcp__server__tool is indexed
// with its server's name as context.
func NewToolIndex(defs []llm.ToolDef) *ToolIndex {
	x := &ToolIndex{defs: defs, servers: make([]string, len(defs))}
	docs := make([]toolsearch.Doc, len(defs))
	for i, d := range defs {
		x.servers[i] = toolServer(d.Name)
		docs[i] = toolsearch.Doc{Name: d.Name, Description: d.Description, Schema: d.Schema, Server: x.servers[i]}
	}
	x.ix = toolsearch.New(docs)
	return x
}

// toolServer is the server part of an MCP tool's name ("" for others).
func toolServer(name string) string {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return ""
	}
	s, _, ok := strings.Cut(rest, "__")
	if !ok {
		return ""
	}
	return s
}

// Len is the number of tools indexed.
func (x *ToolIndex) Len() int { return len(x.defs) }

// Search returns at most limit tools for query, best first.
func (x *ToolIndex) Search(query string, limit int) []ToolMatch {
	var out []ToolMatch
	for _, h := range x.ix.Search(query, limit) {
		out = append(out, ToolMatch{Name: x.defs[h.Doc].Name, Score: h.Score, Why: why(h.Matched)})
	}
	return out
}

// Server returns the names of the tools of an MCP server, in listing order.
func (x *ToolIndex) Server(server string) []string {
	var out []string
	for i, s := range x.servers {
		if s != "" && s == server {
			out = append(out, x.defs[i].Name)
		}
	}
	return out
}

func why(matched []string) string {
	if len(matched) == 0 {
		return "related words"
	}
	if len(matched) > 4 {
		matched = matched[:4]
	}
	return "matched " + strings.Join(matched, ", ")
}
