// Package toolsearch ranks tools for a query: BM25F over a tool's name,
// title, description and parameters (names, descriptions and enum values
// at any depth), with English stemming, compound product names kept whole,
// a multiplicative boost when the query names the tool's server, and
// pseudo-relevance feedback (RM3) from the first pass's top tools. It is
// the search behind the agent's deferred tools; [BM25] is the plain
// baseline it is measured against. An Index is immutable once built and
// safe for concurrent use.
package toolsearch

import (
	"encoding/json"
	"math"
	"sort"
	"strings"
)

// Doc is one tool to index.
type Doc struct {
	Name        string
	Title       string
	Description string
	// Schema is the tool's input JSON Schema; its properties' names,
	// descriptions and enum values are indexed at any depth.
	Schema json.RawMessage
	// Server names the tool's source (an MCP server's name) and
	// Instructions is that server's instructions: context, which boosts a
	// tool only when the query names its server.
	Server       string
	Instructions string
}

// Hit is a ranked result: the position of the doc in the slice given to
// New, its score, and the query terms it matched (stemmed), best first.
type Hit struct {
	Doc     int
	Score   float64
	Matched []string
}

type field int

const (
	fName field = iota
	fTitle
	fDesc
	fParam
	fServer
	nFields
)

// Field weights and length normalisation (BM25F), chosen a priori (a
// name term counts most, a parameter's text least), not fitted to the
// evaluation tasks.
var (
	fWeight = [nFields]float64{fName: 4, fTitle: 3, fDesc: 1, fParam: 0.6, fServer: 0.3}
	fB      = [nFields]float64{fName: 0.3, fTitle: 0.3, fDesc: 0.75, fParam: 0.75, fServer: 0.5}
)

const (
	k1f = 1.2
	// serverBoost multiplies a tool's score when the query names its server.
	serverBoost = 1.5
	// prfDocs, prfTerms and prfWeight are RM3's feedback set, expansion
	// terms and their share of the expanded query.
	prfDocs   = 3
	prfTerms  = 6
	prfWeight = 0.25
	// maxSchemaText bounds the indexed text of one schema.
	maxSchemaText = 8192
)

type fposting struct {
	doc int32
	tf  [nFields]float32
}

// Index is the tool search index.
type Index struct {
	n        int
	flen     [][nFields]float32
	avg      [nFields]float64
	terms    map[string][]fposting
	servers  [][]string // each doc's server-name terms
	docTerms [][]string // each doc's distinct name, title and description terms (for feedback)
}

// New indexes docs.
func New(docs []Doc) *Index {
	ix := &Index{n: len(docs), flen: make([][nFields]float32, len(docs)), terms: map[string][]fposting{},
		servers: make([][]string, len(docs)), docTerms: make([][]string, len(docs))}
	tf := map[string]*[nFields]float32{}
	for i, d := range docs {
		clear(tf)
		add := func(text string, f field) {
			for _, t := range Terms(text) {
				p := tf[t]
				if p == nil {
					p = new([nFields]float32)
					tf[t] = p
				}
				p[f]++
				ix.flen[i][f]++
			}
		}
		name := d.Name
		if d.Server != "" {
			name = strings.TrimPrefix(name, "mcp__"+d.Server+"__")
		}
		add(name, fName)
		add(d.Title, fTitle)
		add(clipText(d.Description, maxDescBytes), fDesc)
		add(clipText(schemaText(d.Schema), maxSchemaText), fParam)
		add(d.Server+" "+clipText(d.Instructions, maxDescBytes), fServer)
		ix.servers[i] = Terms(d.Server)
		for t, p := range tf {
			ix.terms[t] = append(ix.terms[t], fposting{doc: int32(i), tf: *p})
			if p[fName]+p[fTitle]+p[fDesc] > 0 {
				ix.docTerms[i] = append(ix.docTerms[i], t)
			}
		}
		sort.Strings(ix.docTerms[i])
		for f := range nFields {
			ix.avg[f] += float64(ix.flen[i][f])
		}
	}
	for f := range nFields {
		ix.avg[f] = max(ix.avg[f]/float64(max(ix.n, 1)), 1)
	}
	return ix
}

// Len is the number of indexed docs.
func (ix *Index) Len() int { return ix.n }

func (ix *Index) idf(t string) float64 {
	df := float64(len(ix.terms[t]))
	if df == 0 {
		return 0
	}
	return math.Log(1 + (float64(ix.n)-df+0.5)/(df+0.5))
}

// score adds BM25F scores of the weighted query terms into scores, and
// records each doc's matched terms.
func (ix *Index) score(q map[string]float64, scores []float64, matched map[int32][]string) {
	for t, qw := range q {
		idf := ix.idf(t)
		if idf == 0 {
			continue
		}
		for _, p := range ix.terms[t] {
			var tfw float64
			for f := range nFields {
				if p.tf[f] == 0 {
					continue
				}
				norm := 1 - fB[f] + fB[f]*float64(ix.flen[p.doc][f])/ix.avg[f]
				tfw += fWeight[f] * float64(p.tf[f]) / norm
			}
			scores[p.doc] += qw * idf * tfw / (k1f + tfw)
			if matched != nil && qw >= 1 {
				matched[p.doc] = append(matched[p.doc], t)
			}
		}
	}
}

// Search returns at most k docs matching query, best first (ties by
// position, so results are stable).
func (ix *Index) Search(query string, k int) []Hit {
	if ix.n == 0 || k <= 0 {
		return nil
	}
	qt := Terms(query)
	if len(qt) > maxQueryTerms {
		qt = qt[:maxQueryTerms]
	}
	q := map[string]float64{}
	for _, t := range qt {
		q[t] = 1
	}
	scores := make([]float64, ix.n)
	matched := map[int32][]string{}
	ix.score(q, scores, matched)
	ix.boostServers(q, scores)
	// RM3: the feedback docs' terms, weighted by the docs' normalised
	// scores and the terms' idf, expand the query.
	top := rank(scores, prfDocs)
	if len(top) > 0 {
		total := 0.0
		for _, h := range top {
			total += h.Score
		}
		exp := map[string]float64{}
		for _, h := range top {
			for _, t := range ix.docTerms[h.Doc] {
				if _, in := q[t]; !in {
					exp[t] += h.Score / total * ix.idf(t) / float64(len(ix.docTerms[h.Doc]))
				}
			}
		}
		type tw struct {
			t string
			w float64
		}
		var ts []tw
		for t, w := range exp {
			ts = append(ts, tw{t, w})
		}
		sort.Slice(ts, func(i, j int) bool {
			if ts[i].w != ts[j].w {
				return ts[i].w > ts[j].w
			}
			return ts[i].t < ts[j].t
		})
		if len(ts) > prfTerms {
			ts = ts[:prfTerms]
		}
		if len(ts) > 0 {
			sum := 0.0
			for _, x := range ts {
				sum += x.w
			}
			eq := map[string]float64{}
			for _, x := range ts {
				eq[x.t] = prfWeight * float64(len(q)) * x.w / sum
			}
			fb := make([]float64, ix.n)
			ix.score(eq, fb, nil)
			for d := range scores {
				if scores[d] > 0 {
					scores[d] += fb[d]
				}
			}
		}
	}
	hits := rank(scores, k)
	for i := range hits {
		hits[i].Matched = matched[int32(hits[i].Doc)]
		sort.Strings(hits[i].Matched)
	}
	return hits
}

// boostServers multiplies the scores of the tools whose server the query
// names.
func (ix *Index) boostServers(q map[string]float64, scores []float64) {
	for d, st := range ix.servers {
		for _, t := range st {
			if _, ok := q[t]; ok && scores[d] > 0 {
				scores[d] *= serverBoost
				break
			}
		}
	}
}

func rank(scores []float64, k int) []Hit {
	var hits []Hit
	for d, sc := range scores {
		if sc > 0 {
			hits = append(hits, Hit{Doc: d, Score: sc})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Doc < hits[j].Doc
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
