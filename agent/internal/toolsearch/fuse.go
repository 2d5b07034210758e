package toolsearch

import (
	"math"
	"sort"
)

// RRFK is the k of reciprocal rank fusion: a doc at rank r (from 1) of a
// ranking adds 1/(RRFK+r) to its fused score.
const RRFK = 60

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

// Fuse merges rankings by reciprocal rank fusion (k = [RRFK]) and
// returns at most k docs, best first (ties by position). A fused hit
// keeps the Matched terms of the first ranking that has it.
func Fuse(k int, rankings ...[]Hit) []Hit {
	score := map[int]float64{}
	matched := map[int][]string{}
	for _, r := range rankings {
		for i, h := range r {
			score[h.Doc] += 1 / float64(RRFK+i+1)
			if _, ok := matched[h.Doc]; !ok {
				matched[h.Doc] = h.Matched
			}
		}
	}
	hits := make([]Hit, 0, len(score))
	for d, s := range score {
		hits = append(hits, Hit{Doc: d, Score: s, Matched: matched[d]})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Doc < hits[j].Doc
	})
	if len(hits) > k {
		hits = hits[:max(k, 0)]
	}
	return hits
}
