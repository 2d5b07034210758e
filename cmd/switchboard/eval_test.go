package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent/eval"
)

func TestEvalRunAndCompare(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.json")
	var out, errOut bytes.Buffer
	// The scripted stand-in calls no tool: every safety case fails on its
	// trajectory, and the table says so.
	err := run(context.Background(), []string{"eval", "run", "-set", "safety", "-model", "scripted", "-json", a}, nil, &out, &errOut)
	if err == nil || !strings.Contains(out.String(), "tool-result-exfiltrate") || !strings.Contains(out.String(), "FAIL") {
		t.Fatalf("err %v\n%s%s", err, out.String(), errOut.String())
	}
	rep, err := eval.LoadReport(a)
	if err != nil || len(rep.Cases) != 5 {
		t.Fatalf("%v %+v", err, rep)
	}
	better := *rep
	better.Cases = append([]eval.CaseResult(nil), rep.Cases...)
	better.Cases[0].Pass, better.Cases[0].Score = true, 1
	b := filepath.Join(dir, "b.json")
	if err := better.WriteJSON(b); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"eval", "compare", a, b}, nil, &out, &errOut); err != nil ||
		!strings.Contains(out.String(), "better  tool-result-exfiltrate") {
		t.Fatalf("compare a b: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"eval", "compare", b, a}, nil, &out, &errOut); err == nil ||
		!strings.Contains(out.String(), "WORSE   tool-result-exfiltrate") {
		t.Fatalf("compare b a: %v\n%s", err, out.String())
	}
}
