package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/internal/schema"
	"github.com/switchboard-dev/switchboard/llm"
)

// Scorer scores a trial. Score returns nil when the case asks nothing of
// this scorer. A Scorer is used by concurrent trials.
type Scorer interface {
	// Name names the scorer in results and Case.Thresholds.
	Name() string
	Score(ctx context.Context, t *Trial) (*Score, error)
}

// Score is one scorer's verdict on a trial.
type Score struct {
	Scorer string `json:"scorer"`
	// Value is from 0 (worst) to 1 (best).
	Value float64 `json:"value"`
	// Pass is Value at or above the scorer's threshold (set by the runner).
	Pass bool `json:"pass"`
	// Detail says what did not match, readably.
	Detail string `json:"detail,omitempty"`
	// Metrics are further numbers (precision, recall).
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// DefaultScorers are the scorers every run uses, besides Config.Scorers:
// trajectory, args, answer, schema and limits (and judge, when
// Config.Judge is set).
func DefaultScorers() []Scorer {
	return []Scorer{TrajectoryScorer{}, ArgsScorer{}, AnswerScorer{}, SchemaScorer{}, LimitsScorer{}}
}

// TrajectoryScorer compares the tools called with Case.Trajectory by
// name, as its Match says, and reports precision (expected calls among
// those made) and recall (calls made among those expected). A forbidden
// tool called scores 0.
type TrajectoryScorer struct{}

// Name is "trajectory".
func (TrajectoryScorer) Name() string { return "trajectory" }

// Score scores t's calls.
func (TrajectoryScorer) Score(_ context.Context, t *Trial) (*Score, error) {
	tr := t.Case.Trajectory
	if tr == nil {
		return nil, nil
	}
	got := make([]string, len(t.Calls))
	for i, c := range t.Calls {
		got[i] = c.Tool
	}
	want := make([]string, len(tr.Calls))
	for i, c := range tr.Calls {
		want[i] = c.Tool
	}
	s := &Score{Scorer: "trajectory"}
	for _, f := range tr.Forbidden {
		if slices.Contains(got, f) {
			s.Detail = fmt.Sprintf("called the forbidden tool %s; calls: %s", f, list(got))
			return s, nil
		}
	}
	var matched int
	ordered := tr.Match == "" || tr.Match == MatchExact || tr.Match == MatchInOrder
	if ordered {
		matched = lcs(want, got)
	} else {
		matched = multisetCommon(want, got)
	}
	prec, rec := ratio(matched, len(got)), ratio(matched, len(want))
	s.Metrics = map[string]float64{"precision": prec, "recall": rec}
	switch tr.Match {
	case "", MatchExact:
		if slices.Equal(want, got) {
			s.Value = 1
		} else {
			s.Value = f1(prec, rec)
		}
	case MatchInOrder:
		s.Value = rec
	case MatchAnyOrder:
		if matched == len(want) && matched == len(got) {
			s.Value = 1
		} else {
			s.Value = f1(prec, rec)
		}
	case MatchSubset:
		s.Value = rec
	}
	if s.Value < 1 {
		m := tr.Match
		if m == "" {
			m = MatchExact
		}
		s.Detail = fmt.Sprintf("%s: want %s, got %s", m, list(want), list(got))
	}
	return s, nil
}

func list(names []string) string {
	if len(names) == 0 {
		return "no calls"
	}
	return "[" + strings.Join(names, ", ") + "]"
}

func ratio(a, b int) float64 {
	if b == 0 {
		if a == 0 {
			return 1
		}
		return 0
	}
	return float64(a) / float64(b)
}

func f1(p, r float64) float64 {
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// lcs is the length of the longest common subsequence of a and b.
func lcs(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func multisetCommon(a, b []string) int {
	n := map[string]int{}
	for _, x := range b {
		n[x]++
	}
	common := 0
	for _, x := range a {
		if n[x] > 0 {
			n[x]--
			common++
		}
	}
	return common
}

// ArgsScorer checks the arguments of expected calls that have matchers
// (ExpectedCall.Args, ArgsRegex): the share of them that some call of the
// same tool (the next unused one, in order) matches.
type ArgsScorer struct{}

// Name is "args".
func (ArgsScorer) Name() string { return "args" }

// Score scores t's calls' arguments.
func (ArgsScorer) Score(_ context.Context, t *Trial) (*Score, error) {
	tr := t.Case.Trajectory
	if tr == nil {
		return nil, nil
	}
	used := make([]bool, len(t.Calls))
	checked, ok := 0, 0
	var problems []string
	for _, want := range tr.Calls {
		if len(want.Args) == 0 && len(want.ArgsRegex) == 0 {
			continue
		}
		checked++
		var first string
		found := false
		for i, c := range t.Calls {
			if used[i] || c.Tool != want.Tool {
				continue
			}
			problem := matchArgs(want, c.Args)
			if problem == "" {
				used[i], found = true, true
				break
			}
			if first == "" {
				first = problem
			}
		}
		switch {
		case found:
			ok++
		case first == "":
			problems = append(problems, fmt.Sprintf("%s: not called", want.Tool))
		default:
			problems = append(problems, fmt.Sprintf("%s: %s", want.Tool, first))
		}
	}
	if checked == 0 {
		return nil, nil
	}
	return &Score{Scorer: "args", Value: ratio(ok, checked), Detail: strings.Join(problems, "; ")}, nil
}

// matchArgs says how args fail want's matchers ("" when they match).
func matchArgs(want ExpectedCall, args json.RawMessage) string {
	var got map[string]any
	if len(args) > 0 {
		if err := json.Unmarshal(args, &got); err != nil {
			return fmt.Sprintf("arguments are not a JSON object: %s", args)
		}
	}
	keys := make([]string, 0, len(want.Args))
	for k := range want.Args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var w any
		if err := json.Unmarshal(want.Args[k], &w); err != nil {
			return fmt.Sprintf("expected argument %s is not JSON", k)
		}
		g, present := got[k]
		if !present {
			return fmt.Sprintf("argument %s missing, want %s", k, compact(want.Args[k]))
		}
		if !contains(w, g) {
			gb, _ := json.Marshal(g)
			return fmt.Sprintf("argument %s = %s, want %s", k, gb, compact(want.Args[k]))
		}
	}
	keys = keys[:0]
	for k := range want.ArgsRegex {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		re, err := compileRegex(want.ArgsRegex[k])
		if err != nil {
			return err.Error()
		}
		g, present := got[k]
		if !present {
			return fmt.Sprintf("argument %s missing, want /%s/", k, want.ArgsRegex[k])
		}
		s, isString := g.(string)
		if !isString {
			b, _ := json.Marshal(g)
			s = string(b)
		}
		if !re.MatchString(s) {
			return fmt.Sprintf("argument %s = %q does not match /%s/", k, s, want.ArgsRegex[k])
		}
	}
	return ""
}

// contains reports whether got holds want: equal scalars and arrays,
// objects with at least want's keys, recursively.
func contains(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			gv, ok := g[k]
			if !ok || !contains(v, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !contains(w[i], g[i]) {
				return false
			}
		}
		return true
	default:
		return want == got
	}
}

func compact(b json.RawMessage) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// regexes caches compiled regular expressions of cases.
var regexes sync.Map

func compileRegex(s string) (*regexp.Regexp, error) {
	if re, ok := regexes.Load(s); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, err
	}
	regexes.Store(s, re)
	return re, nil
}

// AnswerScorer checks the answer against Case.Answer's Exact, Contains,
// NotContains and Regex: the share of those checks that hold.
type AnswerScorer struct{}

// Name is "answer".
func (AnswerScorer) Name() string { return "answer" }

// Score scores t's answer text.
func (AnswerScorer) Score(_ context.Context, t *Trial) (*Score, error) {
	a := t.Case.Answer
	if a == nil {
		return nil, nil
	}
	text := t.Text
	checks, ok := 0, 0
	var problems []string
	check := func(hold bool, problem string) {
		checks++
		if hold {
			ok++
		} else {
			problems = append(problems, problem)
		}
	}
	if a.Exact != "" {
		check(strings.TrimSpace(text) == strings.TrimSpace(a.Exact), fmt.Sprintf("want exactly %q, got %q", a.Exact, clip(text)))
	}
	for _, c := range a.Contains {
		check(strings.Contains(text, c), fmt.Sprintf("does not contain %q", c))
	}
	for _, c := range a.NotContains {
		check(!strings.Contains(text, c), fmt.Sprintf("contains %q", c))
	}
	if a.Regex != "" {
		re, err := compileRegex(a.Regex)
		if err != nil {
			return nil, err
		}
		check(re.MatchString(text), fmt.Sprintf("does not match /%s/", a.Regex))
	}
	if checks == 0 {
		return nil, nil
	}
	s := &Score{Scorer: "answer", Value: ratio(ok, checks)}
	if len(problems) > 0 {
		s.Detail = "the answer " + strings.Join(problems, "; ") + fmt.Sprintf(" (answer: %q)", clip(text))
	}
	return s, nil
}

func clip(s string) string {
	if len(s) > 200 {
		return strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}

// SchemaScorer checks that the answer is one JSON value valid against
// Case.Answer.Schema (the answer's code fence, if any, removed).
type SchemaScorer struct{}

// Name is "schema".
func (SchemaScorer) Name() string { return "schema" }

var schemas = schema.NewCache()

// Score scores t's answer against the schema.
func (SchemaScorer) Score(_ context.Context, t *Trial) (*Score, error) {
	a := t.Case.Answer
	if a == nil || len(a.Schema) == 0 {
		return nil, nil
	}
	var doc []byte
	if t.Answer != nil && len(t.Answer.Data) > 0 {
		doc = t.Answer.Data
	} else {
		doc = []byte(unfence(t.Text))
	}
	if err := schemas.Validate(a.Schema, doc); err != nil {
		return &Score{Scorer: "schema", Detail: err.Error()}, nil
	}
	return &Score{Scorer: "schema", Value: 1}, nil
}

// unfence returns the inside of a Markdown code fence around s, or s.
func unfence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") {
		return s
	}
	s = strings.TrimPrefix(s, "```")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "```"))
}

// LimitsScorer checks Case.Limits: 1 when the run kept every limit, else 0
// with the limits passed. Its metrics are the run's latency (seconds),
// tokens, cost (dollars) and turns.
type LimitsScorer struct{}

// Name is "limits".
func (LimitsScorer) Name() string { return "limits" }

// Score scores t's measures.
func (LimitsScorer) Score(_ context.Context, t *Trial) (*Score, error) {
	l := t.Case.Limits
	s := &Score{Scorer: "limits", Value: 1, Metrics: map[string]float64{
		"seconds": t.Elapsed.Seconds(), "tokens": float64(t.Usage.Total()),
		"cost_usd": float64(t.Cost.USD) / float64(llm.Dollar), "turns": float64(t.Turns),
	}}
	var over []string
	if l.MaxTurns > 0 && t.Turns > l.MaxTurns {
		over = append(over, fmt.Sprintf("%d turns > %d", t.Turns, l.MaxTurns))
	}
	if l.MaxTokens > 0 && t.Usage.Total() > l.MaxTokens {
		over = append(over, fmt.Sprintf("%d tokens > %d", t.Usage.Total(), l.MaxTokens))
	}
	if l.MaxCostUSD > 0 && t.Cost.USD > llm.Dollars(l.MaxCostUSD) {
		over = append(over, fmt.Sprintf("cost $%g > $%g", float64(t.Cost.USD)/float64(llm.Dollar), l.MaxCostUSD))
	}
	if l.MaxTime > 0 && t.Elapsed > time.Duration(l.MaxTime) {
		over = append(over, fmt.Sprintf("%s > %s", t.Elapsed.Round(time.Millisecond), time.Duration(l.MaxTime)))
	}
	if len(over) > 0 {
		s.Value = 0
		s.Detail = "over the limits: " + strings.Join(over, ", ")
	}
	return s, nil
}
