package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent/internal/toolsearch"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// ToolIndex finds tools by what a task says: BM25F over each tool's name,
// title, description (its lead counted apart) and parameters (names,
// descriptions and enum values at any depth), and its server's name and
// instructions, with English stemming, compound product names kept whole
// and acronyms of name words (PR for pull_request), then re-ranked by the
// query's adjacent words found adjacent in the tool's text, the query's
// action (create, read, list, update, delete, search) against the tool
// name's, a boost for the tools of a server the query names,
// pseudo-relevance feedback, and, among a server's tools, the words of
// their names the query has and in which number (docs/context.md#ranking).
// It is the search
// behind search_tools, usable on its own:
//
//	ix := agent.NewToolIndex(specs, nil)
//	for _, m := range ix.Search("open a pull request", 5) {
//		fmt.Println(m.Name, m.Why)
//	}
//
// With an embedder ([ToolIndex.WithEmbedder]), [ToolIndex.SearchContext]
// also ranks tools by the cosine similarity of their vectors to the
// query's and fuses the two rankings by a convex combination of their
// normalised scores, 0.7 of the lexical and 0.3 of the semantic
// (docs/context.md#ranking-by-meaning);
// with a [VectorStore] ([ToolIndex.WithVectorStore]) the tools' vectors
// are shared with the other processes that use it.
//
// A ToolIndex is immutable and safe for concurrent use.
type ToolIndex struct {
	// names are the tools' names; texts are what is embedded of each
	// (embedText).
	names   []string
	texts   []string
	servers []string
	ix      *toolsearch.Index
	// emb, vecs and log rank by meaning (nil emb: lexical only).
	emb   llm.Embedder
	vecs  *toolVectors
	store VectorStore
	docs  *docVectors
	log   zerolog.Logger
}

// docVectors holds an index's tool vectors once computed; turn (a
// one-slot semaphore) lets one search compute them while concurrent ones
// wait (or give up with their context) rather than embed the tools again.
type docVectors struct {
	turn chan struct{}
	v    [][]float32
}

// ToolMatch is one tool a [ToolIndex.Search] found: its name, score, and
// why it matched (the query's words it matched, stemmed).
type ToolMatch struct {
	Name  string
	Score float64
	Why   string
}

// NewToolIndex indexes tools: each one's [ToolSpec.Name],
// [ToolSpec.Title], [ToolSpec.Description] and [ToolSpec.InputSchema],
// with its server as context. A tool's server is the [Provenance.Name] of
// a tool from an MCP server ([Provenance.Kind] [failure.SourceMCP]), else
// the server part of a name mcp__server__tool (as [ToolName] makes it);
// instructions holds servers' instructions by server name (an MCP
// server's initialize result's instructions; nil: none). A server's name
// and instructions are indexed in a field of their own, weighed like a
// tool's name, and a query that names the server boosts its tools. The
// index keeps tools' order (ties rank in it) and does not modify tools.
func NewToolIndex(tools []ToolSpec, instructions map[string]string) *ToolIndex {
	x := &ToolIndex{names: make([]string, len(tools)), texts: make([]string, len(tools)), servers: make([]string, len(tools))}
	docs := make([]toolsearch.Doc, len(tools))
	for i, t := range tools {
		x.names[i] = t.Name
		x.servers[i] = specServer(t)
		x.texts[i] = embedText(t, x.servers[i])
		docs[i] = toolsearch.Doc{Name: t.Name, Title: t.Title, Description: t.Description, Schema: t.InputSchema, Server: x.servers[i]}
		if x.servers[i] != "" {
			docs[i].Instructions = instructions[x.servers[i]]
		}
	}
	x.ix = toolsearch.New(docs)
	return x
}

// specServer is the MCP server a tool comes from ("" for others).
func specServer(t ToolSpec) string {
	if t.Source.Kind == failure.SourceMCP && t.Source.Name != "" {
		return t.Source.Name
	}
	return toolServer(t.Name)
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
func (x *ToolIndex) Len() int { return len(x.names) }

// WithEmbedder returns an index of the same tools whose
// [ToolIndex.SearchContext] also ranks by meaning with e: each tool's
// vector is computed on the first search and cached in memory (keyed by a
// hash of the tool's definition and e's name), the query's at each
// search. When e fails, the search falls back to the lexical ranking and
// logs a warning to log (nil: none).
func (x *ToolIndex) WithEmbedder(e llm.Embedder, log *zerolog.Logger) *ToolIndex {
	return x.withVectors(e, &toolVectors{}, log)
}

// WithVectorStore returns an index of the same tools whose vectors are
// read from s before they are embedded, and written to s once embedded,
// so that processes sharing s embed each tool once (nil: memory only).
func (x *ToolIndex) WithVectorStore(s VectorStore) *ToolIndex {
	cp := *x
	cp.store = s
	if cp.emb != nil {
		// The tools' vectors are looked up again, through s.
		cp.docs = &docVectors{turn: make(chan struct{}, 1)}
	}
	return &cp
}

// withVectors is WithEmbedder with a cache shared with other indexes (an
// agent's, across its tool snapshots).
func (x *ToolIndex) withVectors(e llm.Embedder, vecs *toolVectors, log *zerolog.Logger) *ToolIndex {
	cp := *x
	cp.emb, cp.vecs, cp.log = e, vecs, zerolog.Nop()
	cp.docs = &docVectors{turn: make(chan struct{}, 1)}
	if log != nil {
		cp.log = *log
	}
	return &cp
}

// Search returns at most limit tools for query, best first, by the
// lexical ranking alone.
func (x *ToolIndex) Search(query string, limit int) []ToolMatch {
	return x.matches(x.ix.Search(query, limit), nil)
}

// semanticWeight is the share of the ranking by meaning in
// SearchContext's fused score, the lexical ranking's being the rest
// (chosen on the evaluation's dev tasks with a real embedding model:
// TestSearchByMeaningEvaluation).
var semanticWeight = 0.3

// fuseDepth is how many of each ranking's best tools are fused.
const fuseDepth = 50

// SearchContext returns at most limit tools for query, best first: the
// lexical ranking fused with the ranking by meaning when the index has an
// embedder (ctx bounds its calls), else the lexical ranking.
func (x *ToolIndex) SearchContext(ctx context.Context, query string, limit int) []ToolMatch {
	if x.emb == nil || limit <= 0 || len(x.names) == 0 {
		return x.Search(query, limit)
	}
	depth := max(limit, fuseDepth)
	lex := x.ix.Search(query, depth)
	sem, err := x.semantic(ctx, query, depth)
	if err != nil {
		x.log.Warn().Err(err).Str("embedder", x.emb.Name()).Msg("tool search by meaning failed; ranking by words alone")
		return x.matches(lex[:min(limit, len(lex))], nil)
	}
	lexical := make(map[int]bool, len(lex))
	for _, h := range lex {
		lexical[h.Doc] = true
	}
	return x.matches(toolsearch.Combine(limit, lex, sem, semanticWeight), lexical)
}

// semantic ranks the tools by the cosine similarity of their vectors to
// query's.
func (x *ToolIndex) semantic(ctx context.Context, query string, k int) ([]toolsearch.Hit, error) {
	docs, err := x.docVectors(ctx)
	if err != nil {
		return nil, err
	}
	q, err := x.emb.Embed(ctx, []string{query})
	if err != nil {
		return nil, err
	}
	if len(q) != 1 {
		return nil, failure.New(failure.Protocol, failure.SourceModel,
			fmt.Sprintf("embedder %s returned %d vectors for one query", x.emb.Name(), len(q)))
	}
	return toolsearch.Cosine(q[0], docs, k), nil
}

// docVectors returns the tools' vectors, computing them (through the
// cache) on first use; a failure is retried by the next search.
func (x *ToolIndex) docVectors(ctx context.Context) ([][]float32, error) {
	select {
	case x.docs.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-x.docs.turn }()
	if x.docs.v == nil {
		v, err := x.vecs.vectors(ctx, x.emb, x.store, x.log, x.texts)
		if err != nil {
			return nil, err
		}
		x.docs.v = v
	}
	return x.docs.v, nil
}

// matches turns hits into ToolMatches; with lexical set (a fused
// ranking), a hit the lexical ranking did not find matched by meaning.
func (x *ToolIndex) matches(hits []toolsearch.Hit, lexical map[int]bool) []ToolMatch {
	var out []ToolMatch
	for _, h := range hits {
		w := why(h.Matched)
		if lexical != nil && !lexical[h.Doc] {
			w = "similar in meaning"
		}
		out = append(out, ToolMatch{Name: x.names[h.Doc], Score: h.Score, Why: w})
	}
	return out
}

// Server returns the names of the tools of an MCP server, in listing
// order: its name, or the server part of its tools' names (which
// [ToolName] may have sanitised).
func (x *ToolIndex) Server(server string) []string {
	var out []string
	if server == "" {
		return nil
	}
	for i, s := range x.servers {
		if s == server || toolServer(x.names[i]) == server {
			out = append(out, x.names[i])
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
