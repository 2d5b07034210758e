package toolsearch

import (
	"flag"
	"reflect"
	"testing"

	"github.com/switchboard-dev/switchboard/agent/internal/evalset"
)

var tune = flag.Bool("tune", false, "run TestTuneOnDev")

// TestTuneOnDev (go test -run TestTuneOnDev ./agent/internal/toolsearch/ -args -tune)
// is how the ranking's constants were chosen: a coordinate search over
// each on the dev half alone, a change kept only when it gains at least
// one task's worth (0.012 of MRR + recall@5/2). It fails when the search
// moves off the defaults, and logs what it found on each half.
func TestTuneOnDev(t *testing.T) {
	if !*tune {
		t.Skip("run with -tune")
	}
	docs, set := evalCorpus(t)
	sets := set.Halves()
	dev, held, tasks := sets[0].Tasks, sets[1].Tasks, sets[2].Tasks
	obj := func(p params, ts []evalset.Task) (float64, evalset.Scores) {
		ix := newIndex(docs, p)
		s := evaluate(docs, ts, ix.Search)
		return s.MRR + 0.5*s.R5, s
	}
	p := defaults
	gain := 0.012
	type knob struct {
		name string
		ptr  func(*params) *float64
		vals []float64
	}
	fw := func(f field) func(*params) *float64 { return func(p *params) *float64 { return &p.weight[f] } }
	fb := func(f field) func(*params) *float64 { return func(p *params) *float64 { return &p.b[f] } }
	knobs := []knob{
		{"wName", fw(fName), []float64{1, 2, 3, 4, 6, 8}},
		{"wTitle", fw(fTitle), []float64{0, 1, 2, 3, 4}},
		{"wLead", fw(fLead), []float64{0, 0.5, 1, 2, 3}},
		{"wDesc", fw(fDesc), []float64{0.25, 0.5, 1, 1.5}},
		{"wParam", fw(fParam), []float64{0, 0.1, 0.3, 0.6, 1}},
		{"wServer", fw(fServer), []float64{0, 0.3, 0.6, 1}},
		{"wAcro", fw(fAcro), []float64{0, 0.5, 1, 2, 4}},
		{"bName", fb(fName), []float64{0, 0.3, 0.6, 0.9}},
		{"bDesc", fb(fDesc), []float64{0.3, 0.5, 0.75, 0.9}},
		{"bParam", fb(fParam), []float64{0.3, 0.75, 0.9}},
		{"k1", func(p *params) *float64 { return &p.k1 }, []float64{0.6, 0.9, 1.2, 1.6, 2}},
		{"server", func(p *params) *float64 { return &p.serverBoost }, []float64{1, 1.25, 1.5, 2, 3}},
		{"bigram", func(p *params) *float64 { return &p.bigram }, []float64{0, 0.1, 0.2, 0.4, 0.8}},
		{"action", func(p *params) *float64 { return &p.action }, []float64{0, 0.15, 0.3, 0.5, 0.8}},
		{"actionMiss", func(p *params) *float64 { return &p.actionMiss }, []float64{0, 0.1, 0.2, 0.3, 0.5}},
		{"part", func(p *params) *float64 { return &p.part }, []float64{0.2, 0.35, 0.5, 1}},
		{"entity", func(p *params) *float64 { return &p.entity }, []float64{0, 0.25, 0.5, 1}},
		{"prfWeight", func(p *params) *float64 { return &p.prfWeight }, []float64{0, 0.1, 0.25, 0.5}},
		{"nameRerank", func(p *params) *float64 { return &p.nameRerank }, []float64{0, 0.25, 0.5, 1, 1.5, 2}},
		{"number", func(p *params) *float64 { return &p.number }, []float64{0, 0.1, 0.2, 0.3, 0.5}},
	}
	best, _ := obj(p, dev)
	for round := 0; round < 3; round++ {
		changed := false
		for _, k := range knobs {
			cur := *k.ptr(&p)
			bv := cur
			for _, v := range k.vals {
				*k.ptr(&p) = v
				if o, _ := obj(p, dev); o > best+gain {
					best, bv, changed = o, v, true
				}
			}
			*k.ptr(&p) = bv
		}
		for _, pd := range []int{2, 3, 5} {
			for _, pt := range []int{3, 6, 10} {
				od, ot := p.prfDocs, p.prfTerms
				p.prfDocs, p.prfTerms = pd, pt
				if o, _ := obj(p, dev); o > best+gain {
					best, changed = o, true
				} else {
					p.prfDocs, p.prfTerms = od, ot
				}
			}
		}
		for _, lt := range []int{10, 15, 20, 30} {
			old := p.leadTerms
			p.leadTerms = lt
			if o, _ := obj(p, dev); o > best+gain {
				best, changed = o, true
			} else {
				p.leadTerms = old
			}
		}
		if !changed {
			break
		}
	}
	_, ds := obj(p, dev)
	_, hs := obj(p, held)
	_, as := obj(p, tasks)
	t.Logf("params %+v", p)
	if !reflect.DeepEqual(p, defaults) {
		t.Errorf("the search on dev moved off the defaults: %+v", p)
	}
	t.Logf("dev %v held %v all %v", ds, hs, as)
}
