package toolsearch

import (
	"reflect"
	"testing"
)

// TestIndexDeterministic: indexes of one corpus rank every task alike,
// score for score (schemas are walked in key order, terms summed in term
// order).
func TestIndexDeterministic(t *testing.T) {
	docs, set := evalCorpus(t)
	tasks := allTasks(set)
	a := New(docs)
	for run := range 3 {
		b := New(docs)
		for _, tk := range tasks {
			if ha, hb := a.Search(tk.Task, 20), b.Search(tk.Task, 20); !reflect.DeepEqual(ha, hb) {
				t.Fatalf("build %d ranks %q otherwise: %v, then %v", run+2, tk.Task, ha, hb)
			}
		}
	}
}
