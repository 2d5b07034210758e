package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

func jsonIndent(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return append(b, '\n'), err
}

// LoadReport reads a report written by [Report.WriteJSON].
func LoadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s is not an eval report: %w", path, err)
	}
	return &r, nil
}

// WriteTable prints the report as a table: a line per case, then totals.
func (rep *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "CASE\tRESULT\tSCORE\tPASS@K\tTURNS\tTOKENS\tCOST\tTIME\tWHY\n")
	for _, c := range rep.Cases {
		res := "pass"
		if !c.Pass {
			res = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%d/%d\t%d\t%d\t$%.4f\t%s\t%s\n", c.Case, res, c.Score, c.Passes, c.Trials,
			c.Turns, c.Tokens, c.CostUSD, time.Duration(c.Elapsed).Round(time.Millisecond), c.Why())
	}
	fmt.Fprintf(tw, "\n%s (%s, %s): %d passed, %d failed\n", rep.Set, rep.Model, rep.Mode, rep.Passed, rep.Failed)
	return tw.Flush()
}

// Why says, on one line, why a case failed ("" when it passed).
func (c CaseResult) Why() string {
	if c.Pass {
		return ""
	}
	var parts []string
	if c.Error != "" {
		parts = append(parts, firstLineOf(c.Error))
	}
	for _, s := range c.Scores {
		if !s.Pass {
			parts = append(parts, fmt.Sprintf("%s %.2f: %s", s.Scorer, s.Value, firstLineOf(s.Detail)))
		}
	}
	return strings.Join(parts, "; ")
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return clip(s)
}

// Delta is a case whose result changed between two reports.
type Delta struct {
	Case       string  `json:"case"`
	Before     float64 `json:"before"`
	After      float64 `json:"after"`
	PassBefore bool    `json:"pass_before"`
	PassAfter  bool    `json:"pass_after"`
}

// Comparison is the difference between two reports of a set.
type Comparison struct {
	Better  []Delta  `json:"better"`
	Worse   []Delta  `json:"worse"`
	Same    int      `json:"same"`
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
}

// Compare says which cases got better or worse from a to b: a case is
// better when it passes in b and failed in a, or passes the same and its
// score rose; worse the other way.
func Compare(a, b *Report) *Comparison {
	cmp := &Comparison{}
	before := map[string]CaseResult{}
	for _, c := range a.Cases {
		before[c.Case] = c
	}
	seen := map[string]bool{}
	for _, c := range b.Cases {
		seen[c.Case] = true
		p, ok := before[c.Case]
		if !ok {
			cmp.Added = append(cmp.Added, c.Case)
			continue
		}
		d := Delta{Case: c.Case, Before: p.Score, After: c.Score, PassBefore: p.Pass, PassAfter: c.Pass}
		switch {
		case c.Pass && !p.Pass, c.Pass == p.Pass && c.Score > p.Score+1e-9:
			cmp.Better = append(cmp.Better, d)
		case !c.Pass && p.Pass, c.Pass == p.Pass && c.Score < p.Score-1e-9:
			cmp.Worse = append(cmp.Worse, d)
		default:
			cmp.Same++
		}
	}
	for _, c := range a.Cases {
		if !seen[c.Case] {
			cmp.Removed = append(cmp.Removed, c.Case)
		}
	}
	slices.Sort(cmp.Added)
	slices.Sort(cmp.Removed)
	return cmp
}

// WriteText prints the comparison, a line per changed case.
func (cmp *Comparison) WriteText(w io.Writer) error {
	verdict := func(p bool) string {
		if p {
			return "pass"
		}
		return "fail"
	}
	for _, d := range cmp.Better {
		fmt.Fprintf(w, "better  %s: %s %.2f -> %s %.2f\n", d.Case, verdict(d.PassBefore), d.Before, verdict(d.PassAfter), d.After)
	}
	for _, d := range cmp.Worse {
		fmt.Fprintf(w, "WORSE   %s: %s %.2f -> %s %.2f\n", d.Case, verdict(d.PassBefore), d.Before, verdict(d.PassAfter), d.After)
	}
	for _, c := range cmp.Added {
		fmt.Fprintf(w, "added   %s\n", c)
	}
	for _, c := range cmp.Removed {
		fmt.Fprintf(w, "removed %s\n", c)
	}
	_, err := fmt.Fprintf(w, "%d better, %d worse, %d the same\n", len(cmp.Better), len(cmp.Worse), cmp.Same)
	return err
}
