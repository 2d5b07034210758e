package policyref

import (
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
)

func TestRef(t *testing.T) {
	given, fallback, agentA, agentB := failure.NewPolicy(failure.PolicyConfig{}), failure.NewPolicy(failure.PolicyConfig{}),
		failure.NewPolicy(failure.PolicyConfig{}), failure.NewPolicy(failure.PolicyConfig{})
	cases := []struct {
		name      string
		given     failure.Policy
		uses      []failure.Policy
		want      failure.Policy
		lastTaken bool
	}{
		{"configured keeps its own", given, []failure.Policy{agentA}, given, false},
		{"default adopts the agent's", nil, []failure.Policy{agentA}, agentA, true},
		{"the first agent's wins", nil, []failure.Policy{agentA, agentB}, agentA, false},
		{"the same agent again", nil, []failure.Policy{agentA, agentA}, agentA, true},
		{"nil is ignored", nil, []failure.Policy{nil}, fallback, false},
		{"unused keeps the default", nil, nil, fallback, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := New(tc.given, fallback)
			taken := false
			for _, p := range tc.uses {
				taken = r.Use(p)
			}
			if r.Get() != tc.want || taken != tc.lastTaken {
				t.Errorf("policy %p (taken %v), want %p (taken %v)", r.Get(), taken, tc.want, tc.lastTaken)
			}
		})
	}
}

func TestRefConcurrent(t *testing.T) {
	r := New(nil, failure.NewPolicy(failure.PolicyConfig{}))
	p := failure.NewPolicy(failure.PolicyConfig{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(2)
		go func() { defer wg.Done(); r.Use(p) }()
		go func() { defer wg.Done(); _ = r.Get() }()
	}
	wg.Wait()
	if r.Get() != p {
		t.Fatal("the agent's policy was not adopted")
	}
}

// funcPolicy is a policy of a type == cannot compare.
type funcPolicy struct {
	failure.Policy
	tags []string
}

func TestSameUncomparable(t *testing.T) {
	a := funcPolicy{Policy: failure.NewPolicy(failure.PolicyConfig{})}
	r := New(a, nil)
	if r.Use(funcPolicy{Policy: a.Policy}) {
		t.Fatal("an uncomparable policy was taken for the configured one")
	}
	if Same(a, a) {
		t.Fatal("uncomparable policies compared equal")
	}
}
