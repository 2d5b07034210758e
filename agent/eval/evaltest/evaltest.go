// Package evaltest runs an eval set as subtests of a go test, in the spirit
// of net/http/httptest: one call per set, a subtest per case, parallel
// within Config.Parallel, each failing with its scores and the first
// difference of a diverged replay.
//
//	func TestEvals(t *testing.T) {
//		evaltest.RunFile(t, "testdata/weather.yaml", eval.Config{
//			Cassettes: "testdata/cassettes",
//			Agent:     newAgent, // func(ctx, *eval.Case, llm.Model) (agent.Runner, error)
//		})
//	}
//
// SWITCHBOARD_EVAL_MODE (replay, record, live) overrides Config.Mode, so
// that the same test records its cassettes against a real model;
// SWITCHBOARD_EVAL_REPORT names a file the set's JSON report is written to.
// See docs/evals.md.
package evaltest

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/agent/eval"
)

// RunFile loads the set at path and runs it ([Run]).
func RunFile(t *testing.T, path string, cfg eval.Config) *eval.Report {
	t.Helper()
	set, err := eval.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return Run(t, set, cfg)
}

// Run runs set's cases as subtests of t and returns the report once they
// are done. Each subtest logs its scores and fails when its case fails.
func Run(t *testing.T, set *eval.Set, cfg eval.Config) *eval.Report {
	t.Helper()
	if m := os.Getenv("SWITCHBOARD_EVAL_MODE"); m != "" {
		cfg.Mode = eval.Mode(m)
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = 4
	}
	r := eval.NewRunner(cfg)
	rep := &eval.Report{Set: set.Name, Mode: cfg.Mode, Cases: make([]eval.CaseResult, len(set.Cases))}
	if cfg.Model != nil {
		rep.Model = cfg.Model.Name()
	}
	for _, s := range set.Skipped {
		t.Logf("skipped %s: %s", s.Case, s.Reason)
	}
	sem := make(chan struct{}, cfg.Parallel)
	var mu sync.Mutex
	t.Run(set.Name, func(t *testing.T) {
		for i := range set.Cases {
			c := &set.Cases[i]
			t.Run(c.Name, func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				res := r.Case(context.Background(), set, c)
				mu.Lock()
				rep.Cases[i] = res
				mu.Unlock()
				report(t, res)
			})
		}
	})
	for _, c := range rep.Cases {
		if c.Pass {
			rep.Passed++
		} else {
			rep.Failed++
		}
	}
	if path := os.Getenv("SWITCHBOARD_EVAL_REPORT"); path != "" {
		if err := rep.WriteJSON(path); err != nil {
			t.Errorf("writing the eval report: %v", err)
		}
	}
	return rep
}

func report(t *testing.T, res eval.CaseResult) {
	t.Helper()
	for _, s := range res.Scores {
		t.Logf("%s: %.2f %s", s.Scorer, s.Value, s.Detail)
	}
	if res.Pass {
		return
	}
	if res.Error != "" {
		t.Errorf("the run failed: %s", res.Error)
	}
	for _, s := range res.Scores {
		if !s.Pass {
			t.Errorf("%s scored %.2f: %s", s.Scorer, s.Value, s.Detail)
		}
	}
	if res.Error == "" && res.Passes == 0 && len(res.Scores) == 0 {
		t.Errorf("no trial passed")
	}
}
