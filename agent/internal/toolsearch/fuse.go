package toolsearch

import (
	"math"
	"sort"
)

// Cosine ranks docs by the cosine similarity of their vectors to q and
// returns at most k with a positive similarity, best first (ties by
// position). A vector of another length than q, or of zero norm, ranks
// nowhere.
func Cosine(q []float32, docs [][]float32, k int) []Hit {
	qn := norm(q)
	if qn == 0 || k <= 0 {
		return nil
	}
	scores := make([]float64, len(docs))
	for i, d := range docs {
		if len(d) != len(q) {
			continue
		}
		dn := norm(d)
		if dn == 0 {
			continue
		}
		var dot float64
		for j := range d {
			dot += float64(d[j]) * float64(q[j])
		}
		scores[i] = dot / (qn * dn)
	}
	return rank(scores, k)
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// Combine fuses a lexical ranking and a ranking by meaning of the same
// docs by a convex combination of their normalised scores (Bruch, Gai and
// Ingber, "An Analysis of Fusion Functions for Hybrid Retrieval", ACM
// TOIS 2023, found it better than reciprocal rank fusion, and its weight
// easy to choose on few queries; on the evaluation's tasks with a real
// embedding model reciprocal rank fusion lost recall@5 to the lexical
// ranking alone): a doc scores (1-w)·l + w·s, where l is its lexical
// score over lex's best (0 when lex lacks it) and s its similarity
// rescaled so that sem's lowest is 0 and its highest 1 (0 when sem lacks
// it; 1 when all are equal). It returns at most k docs, best first (ties
// by position), each keeping lex's Matched terms. Rescaling the
// similarities makes w hold across embedding models, whose cosines spread
// over different ranges.
func Combine(k int, lex, sem []Hit, w float64) []Hit {
	if k <= 0 {
		return nil
	}
	score := map[int]float64{}
	matched := map[int][]string{}
	if len(lex) > 0 && lex[0].Score > 0 {
		for _, h := range lex {
			score[h.Doc] += (1 - w) * h.Score / lex[0].Score
			matched[h.Doc] = h.Matched
		}
	}
	if len(sem) > 0 {
		hi, lo := sem[0].Score, sem[0].Score
		for _, h := range sem {
			hi, lo = max(hi, h.Score), min(lo, h.Score)
		}
		for _, h := range sem {
			s := 1.0
			if hi > lo {
				s = (h.Score - lo) / (hi - lo)
			}
			score[h.Doc] += w * s
		}
	}
	hits := make([]Hit, 0, len(score))
	for d, s := range score {
		if s > 0 {
			hits = append(hits, Hit{Doc: d, Score: s, Matched: matched[d]})
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
