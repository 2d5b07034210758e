package evalset

import (
	"math"
	"strings"
	"testing"
)

// TestScore checks the scores' arithmetic on tasks whose ranks are known.
func TestScore(t *testing.T) {
	tasks := []Task{
		{Task: "first", Want: "s/a"},
		{Task: "second", Want: "s/b"},
		{Task: "fifth", Want: "s/c", Also: []string{"t/c"}},
		{Task: "missed", Want: "s/d"},
	}
	ranks := map[string][]string{
		"first":  {"mcp__s__a", "mcp__s__b"},
		"second": {"mcp__s__x", "mcp__s__b"},
		"fifth":  {"1", "2", "3", "4", "mcp__t__c", "mcp__s__c"},
		"missed": {"mcp__s__a"},
	}
	got := Score(tasks, func(q string) []string { return ranks[q] })
	want := Scores{R1: 0.25, R5: 0.75, MRR: (1 + 0.5 + 0.2) / 4}
	if math.Abs(got.R1-want.R1)+math.Abs(got.R5-want.R5)+math.Abs(got.MRR-want.MRR) > 1e-12 {
		t.Errorf("Score = %v, want %v", got, want)
	}
	if r := Rank(tasks[2], ranks["fifth"]); r != 4 {
		t.Errorf("Rank = %d, want 4 (Also counts)", r)
	}
}

// TestLoad reads the real evaluation set and refuses one whose task wants
// a tool the corpus lacks, naming it.
func TestLoad(t *testing.T) {
	set, err := Load("../../testdata/toolsearch")
	if err != nil {
		t.Fatal(err)
	}
	h := set.Halves()
	n := len(set.Tasks) + len(set.DevOnly)
	if len(h) != 3 || len(h[0].Tasks)+len(h[1].Tasks) != n || len(h[2].Tasks) != n || len(h[1].Tasks) != len(set.Tasks)/2 {
		t.Errorf("halves %d, %d and %d of %d+%d tasks", len(h[0].Tasks), len(h[1].Tasks), len(h[2].Tasks), len(set.Tasks), len(set.DevOnly))
	}
	for i := 1; i < len(set.Servers); i++ {
		if set.Servers[i-1].Name >= set.Servers[i].Name {
			t.Errorf("servers not sorted: %s before %s", set.Servers[i-1].Name, set.Servers[i].Name)
		}
	}
	if _, err := Load("testdata/badtask"); err == nil || !strings.Contains(err.Error(), "mcp__files__delete_file") {
		t.Errorf("Load(badtask) = %v, want an error naming mcp__files__delete_file", err)
	}
	if _, err := Load("testdata/none"); err == nil {
		t.Error("Load of a missing directory succeeded")
	}
}
