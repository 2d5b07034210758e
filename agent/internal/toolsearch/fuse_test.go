package toolsearch

import (
	"math"
	"testing"
)

func TestCosine(t *testing.T) {
	docs := [][]float32{{1, 0}, {0, 1}, {1, 1}, {1}, {0, 0}, {-1, 0}}
	got := Cosine([]float32{1, 0.1}, docs, 10)
	want := []int{0, 2, 1}
	if len(got) != len(want) {
		t.Fatalf("Cosine = %+v, want docs %v", got, want)
	}
	for i, h := range got {
		if h.Doc != want[i] {
			t.Errorf("rank %d = doc %d, want %d", i, h.Doc, want[i])
		}
	}
	if math.Abs(got[0].Score-1/math.Sqrt(1.01)) > 1e-9 {
		t.Errorf("score = %v", got[0].Score)
	}
	if Cosine([]float32{0, 0}, docs, 10) != nil {
		t.Error("a zero query ranked docs")
	}
}

func TestCombine(t *testing.T) {
	cases := []struct {
		name     string
		lex, sem []Hit
		w        float64
		k        int
		want     []int
	}{
		{"agree", []Hit{{Doc: 1, Score: 4}, {Doc: 2, Score: 2}}, []Hit{{Doc: 1, Score: 0.9}, {Doc: 2, Score: 0.5}}, 0.3, 5, []int{1, 2}},
		// Doc 2: 0.7*0.5 + 0.3*1 = 0.65 beats doc 1: 0.7*1 + 0 (sem's lowest).
		{"meaning lifts a second", []Hit{{Doc: 1, Score: 4}, {Doc: 2, Score: 2}}, []Hit{{Doc: 2, Score: 0.8}, {Doc: 1, Score: 0.4}}, 0.6, 5, []int{2, 1}},
		{"words keep their order at a small weight", []Hit{{Doc: 1, Score: 4}, {Doc: 2, Score: 2}}, []Hit{{Doc: 2, Score: 0.8}, {Doc: 1, Score: 0.4}}, 0.3, 5, []int{1, 2}},
		// Only the ranking by meaning has doc 3 (found by meaning alone).
		{"meaning alone", []Hit{{Doc: 1, Score: 1}}, []Hit{{Doc: 3, Score: 0.9}, {Doc: 1, Score: 0.2}}, 0.5, 5, []int{1, 3}},
		{"limit", []Hit{{Doc: 4, Score: 3}, {Doc: 5, Score: 2}, {Doc: 6, Score: 1}}, nil, 0.3, 2, []int{4, 5}},
		{"no words", nil, []Hit{{Doc: 7, Score: 0.5}, {Doc: 8, Score: 0.1}}, 0.3, 3, []int{7}},
		{"equal similarities", nil, []Hit{{Doc: 9, Score: 0.5}, {Doc: 8, Score: 0.5}}, 0.3, 3, []int{8, 9}},
		{"ties by position", []Hit{{Doc: 2, Score: 1}, {Doc: 1, Score: 1}}, nil, 0.3, 3, []int{1, 2}},
		{"k 0", []Hit{{Doc: 1, Score: 1}}, nil, 0.3, 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Combine(c.k, c.lex, c.sem, c.w)
			if len(got) != len(c.want) {
				t.Fatalf("Combine = %+v, want docs %v", got, c.want)
			}
			for i, h := range got {
				if h.Doc != c.want[i] {
					t.Errorf("rank %d = doc %d, want %d (%+v)", i, h.Doc, c.want[i], got)
				}
			}
		})
	}
	got := Combine(1, []Hit{{Doc: 0, Score: 2, Matched: []string{"file"}}}, []Hit{{Doc: 0, Score: 0.7}}, 0.25)
	if got[0].Matched[0] != "file" || math.Abs(got[0].Score-1) > 1e-12 {
		t.Errorf("combined hit = %+v, want score 1 and lex's matched terms", got[0])
	}
}
