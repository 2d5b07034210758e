// Package toolsearch ranks tools for a query: BM25F over a tool's name,
// title, description (its lead counted apart) and parameters (names,
// descriptions and enum values at any depth), with English stemming,
// compound product names kept whole and acronyms of name words (a PR is a
// pull request), then re-ranked by the query's adjacent words found
// adjacent in the tool's name, title or lead, the query's action (create,
// read, list, update, delete, search) against the tool's, a boost when the
// query names the tool's server, and pseudo-relevance feedback (RM3) from
// the first pass's top tools; last, each server's tools are re-ranked among
// themselves by how much of their name the query has, and by their name's
// words agreeing in number with the query's (list_issues for "the open
// issues", get_issue for "issue 128"). It is the search
// behind the agent's deferred tools; [BM25] is the plain baseline it is
// measured against. An Index is immutable once built and safe for
// concurrent use.
package toolsearch

import (
	"encoding/json"
	"math"
	"slices"
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
	// Instructions is that server's instructions: context, indexed in a
	// field of their own (fServer, shared by all the server's tools); a
	// query that names the server also boosts its tools (serverBoost).
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
	fLead // the description's first leadTerms terms
	fDesc
	fParam
	fServer
	fAcro // acronyms of adjacent name words
	nFields
)

// params are the ranking's constants. The defaults were chosen on the
// dev half of the evaluation tasks (even positions) alone, by the
// coordinate search of TestTuneOnDev.
type params struct {
	weight    [nFields]float64
	b         [nFields]float64
	k1        float64
	leadTerms int
	// serverBoost multiplies a tool's score when the query names its server.
	serverBoost float64
	// bigram multiplies a tool's score by 1+bigram for each adjacent pair
	// of query terms adjacent in its name, title or lead.
	bigram float64
	// action multiplies a tool's score by 1+action when its name's action
	// is the query's, by 1-actionMiss when it has another.
	action, actionMiss float64
	// part is the query weight of a part of a word split at inner
	// capitals (git and hub of GitHub; the whole word weighs 1).
	part float64
	// ownServerText keeps out of a tool's title, description and
	// parameters the terms of its own server's name.
	ownServerText bool
	// entity is the query weight of the kind of a thing the query writes
	// out (a URL, an email address, a file name: "url", "email", "file").
	entity float64
	// prfDocs, prfTerms and prfWeight are RM3's feedback set, expansion
	// terms and their share of the expanded query.
	prfDocs, prfTerms int
	prfWeight         float64
	// nameRerank is the last stage: a tool's score is multiplied by
	// 1+nameRerank*(the idf share of its name's terms the query has),
	// then its server's tools are scaled so that the server's best score
	// stays what it was (the names order a server's tools, not servers).
	nameRerank float64
	// number multiplies a tool's score by 1+number for each word of its
	// name the query has in the same number (issue, issues), by
	// 1-number for each it has in the other, its server's tools then
	// scaled as nameRerank's.
	number float64
}

var defaults = params{
	weight:        [nFields]float64{fName: 1, fTitle: 3, fLead: 1, fDesc: 0.5, fParam: 0.6, fServer: 1, fAcro: 2},
	b:             [nFields]float64{fName: 0.3, fTitle: 0.3, fLead: 0.3, fDesc: 0.9, fParam: 0.3, fServer: 0.5, fAcro: 0.3},
	k1:            2,
	leadTerms:     20,
	serverBoost:   2,
	bigram:        0.4,
	action:        0.3,
	actionMiss:    0.1,
	part:          0.5,
	ownServerText: true,
	entity:        1,
	prfDocs:       3,
	prfTerms:      6,
	prfWeight:     0.25,
	nameRerank:    1,
	number:        0.1,
}

// maxSchemaText bounds the indexed text of one schema.
const maxSchemaText = 8192

type fposting struct {
	doc int32
	// tfw is the term's BM25F weighted, length-normalised frequency in
	// the doc (fixed at build, so a search does one division a posting).
	tfw float32
}

type termEntry struct {
	idf      float64
	postings []fposting
}

type server struct {
	name  string
	terms []string
	docs  []int32
}

// Index is the tool search index.
type Index struct {
	p        params
	n        int
	terms    map[string]*termEntry
	servers  [][]string // each doc's server-name terms
	docTerms [][]string // each doc's distinct name, title and description terms (for feedback)
	// bigrams are, for each pair of terms adjacent in a name, title or
	// lead, the docs that have it (each once, in order).
	bigrams map[[2]string][]int32
	// serverList are the servers: their names' terms and their docs.
	serverList []server
	actions    []uint8 // each doc's action classes (bits)
	// names are, for each term of a tool's name (its server's name left
	// out), the docs whose name has it (each once, in order); nameIDF is
	// the sum of the idf of each doc's distinct name terms; serverTerms
	// are the terms of every server's name.
	names       map[string][]int32
	nameIDF     []float64
	serverTerms map[string]bool
	// nameNumbers are, for each doc, its name words' stems and whether
	// each is plural.
	nameNumbers [][]numbered
}

// numbered is a word's stem and whether the word is plural.
type numbered struct {
	stem   string
	plural bool
}

// New indexes docs.
func New(docs []Doc) *Index { return newIndex(docs, defaults) }

func newIndex(docs []Doc, p params) *Index {
	ix := &Index{p: p, n: len(docs), terms: map[string]*termEntry{},
		servers: make([][]string, len(docs)), docTerms: make([][]string, len(docs)),
		bigrams: map[[2]string][]int32{}, actions: make([]uint8, len(docs)),
		names: map[string][]int32{}, nameIDF: make([]float64, len(docs)), serverTerms: map[string]bool{},
		nameNumbers: make([][]numbered, len(docs))}
	nameTermsOf := make([][]string, len(docs))
	for i, d := range docs {
		ix.servers[i] = Terms(d.Server)
		if len(ix.servers[i]) > 0 {
			k := slices.IndexFunc(ix.serverList, func(s server) bool { return s.name == d.Server })
			if k < 0 {
				k = len(ix.serverList)
				ix.serverList = append(ix.serverList, server{name: d.Server, terms: distinct(ix.servers[i])})
				for _, t := range ix.servers[i] {
					ix.serverTerms[t] = true
				}
			}
			ix.serverList[k].docs = append(ix.serverList[k].docs, int32(i))
		}
		name := d.Name
		if d.Server != "" {
			name = strings.TrimPrefix(name, "mcp__"+d.Server+"__")
		}
		// A name word that is the server's name (firecrawl_scrape) says
		// nothing of what the tool does.
		nameTermsOf[i] = without(Terms(name), ix.servers[i])
		ix.nameNumbers[i] = numbers(name)
		for _, t := range distinct(nameTermsOf[i]) {
			ix.names[t] = append(ix.names[t], int32(i))
		}
	}
	type docTF struct {
		tf  map[string]*[nFields]float32
		len [nFields]float32
	}
	all := make([]docTF, len(docs))
	var avg [nFields]float64
	for i, d := range docs {
		tf := map[string]*[nFields]float32{}
		dt := &all[i]
		add := func(terms []string, f field) {
			for _, t := range terms {
				c := tf[t]
				if c == nil {
					c = new([nFields]float32)
					tf[t] = c
				}
				c[f]++
				dt.len[f]++
			}
		}
		nameTerms := nameTermsOf[i]
		add(nameTerms, fName)
		add(acronyms(nameTerms), fAcro)
		// Nor does its server's name in its title, description or
		// parameters: that context is the server field's alone.
		own := ix.servers[i]
		if !p.ownServerText {
			own = nil
		}
		titleTerms := without(Terms(d.Title), own)
		add(titleTerms, fTitle)
		descTerms, _, descPos, _ := splitTerms(clipText(d.Description, maxDescBytes))
		lead := descTerms[:min(len(descTerms), p.leadTerms)]
		pairs := map[[2]string]bool{}
		for _, seq := range [][]string{nameTerms, titleTerms} {
			for j := 1; j < len(seq); j++ {
				pairs[[2]string{seq[j-1], seq[j]}] = true
			}
		}
		// The lead's pairs are words next to each other in the text,
		// stop words counted ("observations from entities" has none).
		for j := 1; j < len(lead); j++ {
			if descPos[j] == descPos[j-1]+1 {
				pairs[[2]string{lead[j-1], lead[j]}] = true
			}
		}
		for pr := range pairs {
			ix.bigrams[pr] = append(ix.bigrams[pr], int32(i))
		}
		descTerms = without(descTerms, own)
		lead = without(lead, own)
		add(lead, fLead)
		add(descTerms, fDesc)
		add(without(Terms(clipText(schemaText(d.Schema), maxSchemaText)), own), fParam)
		add(Terms(d.Server+" "+clipText(d.Instructions, maxDescBytes)), fServer)
		ix.actions[i] = actionsOf(nameTerms)
		dt.tf = tf
		for t, c := range tf {
			if c[fName]+c[fTitle]+c[fDesc] > 0 {
				ix.docTerms[i] = append(ix.docTerms[i], t)
			}
		}
		sort.Strings(ix.docTerms[i])
		for f := range nFields {
			avg[f] += float64(dt.len[f])
		}
	}
	for f := range nFields {
		avg[f] = max(avg[f]/float64(max(ix.n, 1)), 1)
	}
	for i := range all {
		dt := &all[i]
		for t, c := range dt.tf {
			var tfw float64
			for f := range nFields {
				if c[f] == 0 {
					continue
				}
				norm := 1 - p.b[f] + p.b[f]*float64(dt.len[f])/avg[f]
				tfw += p.weight[f] * float64(c[f]) / norm
			}
			if tfw == 0 {
				continue
			}
			e := ix.terms[t]
			if e == nil {
				e = &termEntry{}
				ix.terms[t] = e
			}
			e.postings = append(e.postings, fposting{doc: int32(i), tfw: float32(tfw)})
		}
	}
	for _, e := range ix.terms {
		sort.Slice(e.postings, func(a, b int) bool { return e.postings[a].doc < e.postings[b].doc })
		df := float64(len(e.postings))
		e.idf = math.Log(1 + (float64(ix.n)-df+0.5)/(df+0.5))
	}
	for i, nt := range nameTermsOf {
		for _, t := range distinct(nt) {
			ix.nameIDF[i] += ix.idf(t)
		}
	}
	return ix
}

// without returns terms less those in drop (a new slice when any is
// dropped).
func without(terms, drop []string) []string {
	if len(drop) == 0 {
		return terms
	}
	out := terms[:0:0]
	for _, t := range terms {
		if !contains(drop, t) {
			out = append(out, t)
		}
	}
	return out
}

func distinct(s []string) []string {
	var out []string
	for _, t := range s {
		if !contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func contains(s []string, t string) bool {
	for _, x := range s {
		if x == t {
			return true
		}
	}
	return false
}

// Len is the number of indexed docs.
func (ix *Index) Len() int { return ix.n }

func (ix *Index) idf(t string) float64 {
	if e := ix.terms[t]; e != nil {
		return e.idf
	}
	return 0
}

// score adds BM25F scores of the weighted query terms into scores.
func (ix *Index) score(q map[string]float64, scores []float64) {
	k1 := ix.p.k1
	// In term order, so equal scores stay equal from run to run.
	ts := make([]string, 0, len(q))
	for t := range q {
		ts = append(ts, t)
	}
	sort.Strings(ts)
	for _, t := range ts {
		qw := q[t]
		e := ix.terms[t]
		if e == nil {
			continue
		}
		w := qw * e.idf
		for _, p := range e.postings {
			tfw := float64(p.tfw)
			scores[p.doc] += w * tfw / (k1 + tfw)
		}
	}
}

// Search returns at most k docs matching query, best first (ties by
// position, so results are stable).
func (ix *Index) Search(query string, k int) []Hit {
	if ix.n == 0 || k <= 0 {
		return nil
	}
	qt, part, pos, plural := splitTerms(query)
	if len(qt) > maxQueryTerms {
		qt, part, pos, plural = qt[:maxQueryTerms], part[:maxQueryTerms], pos[:maxQueryTerms], plural[:maxQueryTerms]
	}
	q := map[string]float64{}
	for i, t := range qt {
		w := 1.0
		if part[i] {
			w = ix.p.part
		}
		q[t] = max(q[t], w)
	}
	if ix.p.entity > 0 {
		for _, t := range entities(query) {
			q[t] = max(q[t], ix.p.entity)
		}
	}
	scores := make([]float64, ix.n)
	ix.score(q, scores)
	ix.rerank(qt, queryActions(query), q, scores)
	ix.feedback(q, scores)
	ix.rerankNames(nameQuery(qt, part, pos, ix.serverTerms), scores)
	ix.rerankNumbers(numberedTerms(qt, plural), scores)
	hits := rank(scores, k)
	for i := range hits {
		hits[i].Matched = ix.matched(q, hits[i].Doc)
	}
	return hits
}

// rerank multiplies the scores of the tools the query matched by the
// query's bigrams in them, their action against the query's, and the
// query naming their server.
func (ix *Index) rerank(qt []string, qa uint8, q map[string]float64, scores []float64) {
	for j := 1; j < len(qt); j++ {
		pr := [2]string{qt[j-1], qt[j]}
		if pr[0] == pr[1] || pairSeen(qt[:j], pr) {
			continue
		}
		for _, d := range ix.bigrams[pr] {
			scores[d] *= 1 + ix.p.bigram
		}
	}
	if qa != 0 {
		for d, ta := range ix.actions {
			switch {
			case ta == 0 || scores[d] == 0:
			case qa&ta != 0:
				scores[d] *= 1 + ix.p.action
			default:
				scores[d] *= 1 - ix.p.actionMiss
			}
		}
	}
	// A server is named when the query has every term of its name
	// (brave and search for brave-search).
	for _, sv := range ix.serverList {
		named := len(sv.terms) > 0
		for _, t := range sv.terms {
			if _, ok := q[t]; !ok {
				named = false
				break
			}
		}
		if named {
			for _, d := range sv.docs {
				scores[d] *= ix.p.serverBoost
			}
		}
	}
}

// nameQuery are the query's terms a tool's name is compared with: all but
// the parts of a word that names a server (mongo and db of MongoDB), which
// name no tool.
func nameQuery(qt []string, part []bool, pos []int, serverTerms map[string]bool) map[string]bool {
	named := map[int]bool{}
	for i, t := range qt {
		if !part[i] && serverTerms[t] {
			named[pos[i]] = true
		}
	}
	nq := make(map[string]bool, len(qt))
	for i, t := range qt {
		if !part[i] || !named[pos[i]] {
			nq[t] = true
		}
	}
	return nq
}

// rerankNames orders each server's matched tools by the idf share of
// their name's terms that the query nq has, keeping each server's best
// score: a name tells a server's tools apart, while across servers it
// misleads (a word of one tool's name is another's whole purpose).
// Tools without a server keep their scores.
func (ix *Index) rerankNames(nq map[string]bool, scores []float64) {
	if ix.p.nameRerank == 0 {
		return
	}
	// In term order, so the sums are the same from run to run.
	ts := make([]string, 0, len(nq))
	for t := range nq {
		ts = append(ts, t)
	}
	sort.Strings(ts)
	in := map[int32]float64{}
	for _, t := range ts {
		w := ix.idf(t)
		for _, d := range ix.names[t] {
			if scores[d] > 0 {
				in[d] += w
			}
		}
	}
	if len(in) == 0 {
		return
	}
	ix.withinServers(scores, func(d int32) float64 {
		if w, ok := in[d]; ok && ix.nameIDF[d] > 0 {
			return 1 + ix.p.nameRerank*w/ix.nameIDF[d]
		}
		return 1
	})
}

// withinServers multiplies the score of each matched tool of a server by
// factor, then scales the server's tools so that its best score stays
// what it was: factor orders a server's tools, not servers. Tools without
// a server keep their scores.
func (ix *Index) withinServers(scores []float64, factor func(d int32) float64) {
	for _, sv := range ix.serverList {
		before, after := 0.0, 0.0
		for _, d := range sv.docs {
			if scores[d] <= 0 {
				continue
			}
			before = max(before, scores[d])
			scores[d] *= factor(d)
			after = max(after, scores[d])
		}
		if after > 0 && after != before {
			for _, d := range sv.docs {
				scores[d] *= before / after
			}
		}
	}
}

// rerankNumbers multiplies each matched tool's score by its name words'
// agreement in number with the query's (list_issues for "the open
// issues", get_issue for "issue 128"), then scales each server's tools
// so that its best score stays what it was.
func (ix *Index) rerankNumbers(qn []numbered, scores []float64) {
	if ix.p.number == 0 || len(qn) == 0 {
		return
	}
	ix.withinServers(scores, func(d int32) float64 {
		f := 1.0
		for _, nw := range ix.nameNumbers[d] {
			for _, q := range qn {
				if q.stem == nw.stem {
					if q.plural == nw.plural {
						f *= 1 + ix.p.number
					} else {
						f *= 1 - ix.p.number
					}
					break
				}
			}
		}
		return f
	})
}

// numbers are the terms of text, each with whether its word is plural.
func numbers(text string) []numbered {
	t, _, _, plural := splitTerms(text)
	return numberedTerms(t, plural)
}

func numberedTerms(terms []string, plural []bool) []numbered {
	if len(terms) == 0 {
		return nil
	}
	out := make([]numbered, len(terms))
	for i, t := range terms {
		out[i] = numbered{t, plural[i]}
	}
	return out
}

// pairSeen reports whether pr is a pair of adjacent terms in qt.
func pairSeen(qt []string, pr [2]string) bool {
	for j := 1; j < len(qt); j++ {
		if qt[j-1] == pr[0] && qt[j] == pr[1] {
			return true
		}
	}
	return false
}

// matched are the query's terms doc d has, sorted.
func (ix *Index) matched(q map[string]float64, d int) []string {
	var out []string
	for t := range q {
		e := ix.terms[t]
		if e == nil {
			continue
		}
		ps := e.postings
		k := sort.Search(len(ps), func(i int) bool { return ps[i].doc >= int32(d) })
		if k < len(ps) && ps[k].doc == int32(d) {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// feedback is RM3: the top docs' terms, weighted by the docs' normalised
// scores and the terms' idf, expand the query; they re-rank only the docs
// the query matched.
func (ix *Index) feedback(q map[string]float64, scores []float64) {
	top := rank(scores, ix.p.prfDocs)
	if len(top) == 0 || ix.p.prfTerms == 0 {
		return
	}
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
	if len(ts) > ix.p.prfTerms {
		ts = ts[:ix.p.prfTerms]
	}
	if len(ts) == 0 {
		return
	}
	sum := 0.0
	for _, x := range ts {
		sum += x.w
	}
	eq := map[string]float64{}
	for _, x := range ts {
		eq[x.t] = ix.p.prfWeight * float64(len(q)) * x.w / sum
	}
	fb := make([]float64, ix.n)
	ix.score(eq, fb)
	for d := range scores {
		if scores[d] > 0 {
			scores[d] += fb[d]
		}
	}
}

// rank returns the k docs of positive score, best first (ties by
// position), keeping only the best k as it goes.
func rank(scores []float64, k int) []Hit {
	if k <= 0 {
		return nil
	}
	better := func(a, b Hit) bool { return a.Score > b.Score || (a.Score == b.Score && a.Doc < b.Doc) }
	hits := make([]Hit, 0, min(k, 64))
	for d, sc := range scores {
		if sc <= 0 {
			continue
		}
		h := Hit{Doc: d, Score: sc}
		if len(hits) == k && !better(h, hits[k-1]) {
			continue
		}
		at := sort.Search(len(hits), func(i int) bool { return better(h, hits[i]) })
		if len(hits) < k {
			hits = append(hits, Hit{})
		}
		copy(hits[at+1:], hits[at:len(hits)-1])
		hits[at] = h
	}
	if len(hits) == 0 {
		return nil
	}
	return hits
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
