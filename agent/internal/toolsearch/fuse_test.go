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

func TestFuse(t *testing.T) {
	cases := []struct {
		name string
		a, b []Hit
		k    int
		want []int
	}{
		{"agree", []Hit{{Doc: 1}, {Doc: 2}}, []Hit{{Doc: 1}, {Doc: 2}}, 5, []int{1, 2}},
		// Doc 3 is second in both; doc 1 first in one only: 2/62 > 1/61.
		{"both beat one", []Hit{{Doc: 1}, {Doc: 3}}, []Hit{{Doc: 2}, {Doc: 3}}, 5, []int{3, 1, 2}},
		{"limit", []Hit{{Doc: 4}, {Doc: 5}, {Doc: 6}}, nil, 2, []int{4, 5}},
		{"one side empty", nil, []Hit{{Doc: 7}}, 3, []int{7}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Fuse(c.k, c.a, c.b)
			if len(got) != len(c.want) {
				t.Fatalf("Fuse = %+v, want %v", got, c.want)
			}
			for i, h := range got {
				if h.Doc != c.want[i] {
					t.Errorf("rank %d = doc %d, want %d (%+v)", i, h.Doc, c.want[i], got)
				}
			}
		})
	}
	got := Fuse(1, []Hit{{Doc: 0, Matched: []string{"file"}}}, []Hit{{Doc: 0}})
	if got[0].Matched[0] != "file" || math.Abs(got[0].Score-2.0/61) > 1e-12 {
		t.Errorf("fused hit = %+v", got[0])
	}
}
