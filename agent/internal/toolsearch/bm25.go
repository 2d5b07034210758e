package toolsearch

import (
	"encoding/json"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Field weights: a term in the name counts three times, in a parameter
// name twice, in the description once.
const (
	wName  = 3
	wParam = 2
	wDesc  = 1
	k1     = 1.2
	b      = 0.75
	// maxQueryTerms bounds the work of one query.
	maxQueryTerms = 32
	// maxDescBytes bounds the indexed text of one description.
	maxDescBytes = 4096
)

type posting struct {
	doc int32
	tf  float32 // weighted term frequency
}

// BM25 is the plain BM25 index over tools (name, top-level parameter
// names, description), kept as the baseline the ranking is measured against.
type BM25 struct {
	n      int
	lens   []float32
	avgLen float64
	// norm is each doc's BM25 length normalisation, k1*(1-b+b*len/avg).
	norm  []float64
	terms map[string][]posting
}

// NewBM25 indexes docs for plain BM25.
func NewBM25(docs []Doc) *BM25 {
	ix := &BM25{n: len(docs), lens: make([]float32, len(docs)), terms: map[string][]posting{}}
	total := 0.0
	tf := map[string]float32{}
	for i, d := range docs {
		clear(tf)
		var l float32
		add := func(text string, w float32) {
			for _, t := range plainTerms(text) {
				tf[t] += w
				l += w
			}
		}
		add(d.Name, wName)
		add(ParamNames(d.Schema), wParam)
		desc := d.Description
		if len(desc) > maxDescBytes {
			desc = desc[:maxDescBytes]
		}
		add(desc, wDesc)
		ix.lens[i] = l
		total += float64(l)
		for t, f := range tf {
			ix.terms[t] = append(ix.terms[t], posting{doc: int32(i), tf: f})
		}
	}
	if ix.n > 0 {
		ix.avgLen = total / float64(ix.n)
	}
	ix.norm = make([]float64, ix.n)
	for i, l := range ix.lens {
		ix.norm[i] = k1 * (1 - b + b*float64(l)/max(ix.avgLen, 1))
	}
	return ix
}

// Len is the number of indexed docs.
func (ix *BM25) Len() int { return ix.n }

// Search returns at most k docs matching query, best first (ties by
// position, so results are stable).
func (ix *BM25) Search(query string, k int) []Hit {
	if ix.n == 0 || k <= 0 {
		return nil
	}
	qt := plainTerms(query)
	if len(qt) > maxQueryTerms {
		qt = qt[:maxQueryTerms]
	}
	scores := make([]float64, ix.n)
	seen := make(map[string]bool, len(qt))
	for _, t := range qt {
		if seen[t] {
			continue
		}
		seen[t] = true
		ps := ix.terms[t]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (float64(ix.n)-df+0.5)/(df+0.5))
		for _, p := range ps {
			f := float64(p.tf)
			scores[p.doc] += idf * f * (k1 + 1) / (f + ix.norm[p.doc])
		}
	}
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

// ParamNames returns the names of the top-level properties of a JSON
// Schema, space-separated and sorted ("" when there are none or the schema
// does not parse).
func ParamNames(schema json.RawMessage) string {
	if len(schema) == 0 {
		return ""
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Properties) == 0 {
		return ""
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, " ")
}

// plainTerms splits text into lower-case search terms: letters and digits,
// split at any other character and at camelCase boundaries, a plural "s"
// dropped from words of more than three letters, and stop words left out.
func plainTerms(text string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) == 0 {
			return
		}
		t := strings.ToLower(string(cur))
		cur = cur[:0]
		if len(t) > 3 && strings.HasSuffix(t, "s") && !strings.HasSuffix(t, "ss") {
			t = t[:len(t)-1]
		}
		if !stop[t] {
			out = append(out, t)
		}
	}
	prev := rune(0)
	for len(text) > 0 {
		r, size := utf8.DecodeRuneInString(text)
		text = text[size:]
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}

var stop = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"for": true, "from": true, "in": true, "is": true, "it": true, "of": true, "on": true, "or": true,
	"that": true, "the": true, "thi": true, "this": true, "to": true, "with": true, "will": true, "can": true,
	"mcp": true,
}
