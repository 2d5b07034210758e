package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// Mode is where a run's model turns come from.
type Mode string

// Modes.
const (
	// Replay answers from each case's cassette (Config.Cassettes), offline.
	Replay Mode = "replay"
	// Record runs against Config.Model and writes each case's cassette.
	Record Mode = "record"
	// Live runs against Config.Model and records nothing.
	Live Mode = "live"
)

// Config says how to run a set.
type Config struct {
	// Agent builds the agent under test around m for one trial of c
	// (required). Cases with History or Before need an *agent.Agent.
	Agent func(ctx context.Context, c *Case, m llm.Model) (agent.Runner, error)
	// Model answers in Live and Record mode.
	Model llm.Model
	// Mode is Replay when Model is nil, else Live, unless set.
	Mode Mode
	// Cassettes is the directory of the cassettes, one per case, named
	// for the case (<dir>/<case>.json).
	Cassettes string
	// Ignore are regular expressions of text that differs from run to run
	// (task ids, times, temporary paths), masked on both sides when a
	// replay compares requests.
	Ignore []*regexp.Regexp
	// Scorers are custom scorers, run after DefaultScorers.
	Scorers []Scorer
	// Judge, if set, scores Answer.Rubric (a *Judge of this model).
	Judge llm.Model
	// JudgeMaxCalls bounds the judge's calls over the set (default 100).
	JudgeMaxCalls int64
	// Parallel bounds the cases run at once (default 4).
	Parallel int
	// Repeat runs each case k times (pass@k), in place of Set.Repeat.
	Repeat int
	// Tracer makes the spans of the cases (nil: the global provider); a
	// case's runs' spans are its children.
	Tracer trace.TracerProvider
}

// Report is the result of a set's run: JSON for dashboards and [Compare].
type Report struct {
	Set     string       `json:"set"`
	Model   string       `json:"model"`
	Mode    Mode         `json:"mode"`
	Started time.Time    `json:"started"`
	Elapsed Duration     `json:"elapsed"`
	Passed  int          `json:"passed"`
	Failed  int          `json:"failed"`
	Cases   []CaseResult `json:"cases"`
	// JudgeCalls counts the judge's model calls.
	JudgeCalls int64 `json:"judge_calls,omitempty"`
}

// CaseResult is a case's result over its trials.
type CaseResult struct {
	Case string `json:"case"`
	// Pass: at least one trial passed (pass@k).
	Pass bool `json:"pass"`
	// Trials and Passes count the case's runs and the ones that passed.
	Trials int `json:"trials"`
	Passes int `json:"passes"`
	// Score is the mean of the scores' values of the best trial.
	Score float64 `json:"score"`
	// Scores are the best trial's.
	Scores []Score `json:"scores"`
	// Error is the best trial's run error, if any.
	Error   string   `json:"error,omitempty"`
	Elapsed Duration `json:"elapsed"`
	Tokens  int      `json:"tokens"`
	CostUSD float64  `json:"cost_usd"`
	Turns   int      `json:"turns"`
	Calls   []Call   `json:"calls,omitempty"`
	TraceID string   `json:"trace_id,omitempty"`
}

// Runner runs cases under one Config; its judge's calls count across them.
type Runner struct {
	cfg       Config
	cassettes sync.Map // path -> *Cassette
	judge     *Judge
	tracer    trace.Tracer
}

// NewRunner returns a runner of cfg (no I/O).
func NewRunner(cfg Config) *Runner {
	if cfg.Mode == "" {
		cfg.Mode = Live
		if cfg.Model == nil {
			cfg.Mode = Replay
		}
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = 4
	}
	r := &Runner{cfg: cfg}
	if cfg.Judge != nil {
		r.judge = &Judge{Model: cfg.Judge, MaxCalls: cfg.JudgeMaxCalls}
	}
	tp := cfg.Tracer
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	r.tracer = tp.Tracer("github.com/switchboard-dev/switchboard/agent/eval")
	return r
}

// Run runs every case of set, at most Config.Parallel at once.
func Run(ctx context.Context, set *Set, cfg Config) (*Report, error) {
	return NewRunner(cfg).Run(ctx, set)
}

// Run runs every case of set.
func (r *Runner) Run(ctx context.Context, set *Set) (*Report, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	rep := &Report{Set: set.Name, Model: r.modelName(), Mode: r.cfg.Mode, Started: time.Now()}
	rep.Cases = make([]CaseResult, len(set.Cases))
	sem := make(chan struct{}, r.cfg.Parallel)
	var wg sync.WaitGroup
	for i := range set.Cases {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				rep.Cases[i] = CaseResult{Case: set.Cases[i].Name, Error: ctx.Err().Error()}
				return
			}
			defer func() { <-sem }()
			rep.Cases[i] = r.Case(ctx, set, &set.Cases[i])
		})
	}
	wg.Wait()
	for _, c := range rep.Cases {
		if c.Pass {
			rep.Passed++
		} else {
			rep.Failed++
		}
	}
	rep.Elapsed = Duration(time.Since(rep.Started))
	if r.judge != nil {
		rep.JudgeCalls = r.judge.Calls()
	}
	return rep, nil
}

func (r *Runner) check() error {
	if r.cfg.Agent == nil {
		return &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Message: "eval.Config.Agent is required"}
	}
	switch r.cfg.Mode {
	case Replay:
		if r.cfg.Cassettes == "" {
			return &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Message: "replay needs eval.Config.Cassettes"}
		}
	case Record:
		if r.cfg.Cassettes == "" || r.cfg.Model == nil {
			return &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Message: "recording needs eval.Config.Model and Cassettes"}
		}
	case Live:
		if r.cfg.Model == nil {
			return &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Message: "a live run needs eval.Config.Model"}
		}
	default:
		return &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Message: fmt.Sprintf("unknown eval mode %q", r.cfg.Mode)}
	}
	return nil
}

func (r *Runner) modelName() string {
	if r.cfg.Model != nil {
		return r.cfg.Model.Name()
	}
	return "replay"
}

// CassettePath is where the cassette of case c is kept.
func (r *Runner) CassettePath(c *Case) string {
	return filepath.Join(r.cfg.Cassettes, fileName(c.Name)+".json")
}

func fileName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// Case runs case c of set k times (Config.Repeat, else Set.Repeat) and
// returns its result: its best trial's scores.
func (r *Runner) Case(ctx context.Context, set *Set, c *Case) CaseResult {
	k := r.cfg.Repeat
	if k <= 0 {
		k = set.Repeat
	}
	if k <= 0 {
		k = 1
	}
	ctx, span := r.tracer.Start(ctx, "eval "+set.Name+"/"+c.Name, trace.WithAttributes(
		attribute.String("eval.set", set.Name), attribute.String("eval.case", c.Name),
		attribute.String("eval.mode", string(r.cfg.Mode)), attribute.Int("eval.trials", k)))
	defer span.End()
	res := CaseResult{Case: c.Name, Trials: k, Score: -1}
	if sc := span.SpanContext(); sc.HasTraceID() {
		res.TraceID = sc.TraceID().String()
	}
	for range k {
		t := r.trial(ctx, c)
		scores, pass := r.score(ctx, t)
		mean := meanScore(scores)
		if t.Err != nil {
			mean = 0
		}
		if pass {
			res.Passes++
		}
		if mean > res.Score || (pass && !res.Pass) {
			res.Score = mean
			res.Scores = scores
			res.Error = ""
			if t.Err != nil {
				res.Error = t.Err.Error()
			}
			res.Elapsed = Duration(t.Elapsed)
			res.Tokens = t.Usage.Total()
			res.CostUSD = float64(t.Cost.USD) / float64(llm.Dollar)
			res.Turns = t.Turns
			res.Calls = t.Calls
		}
		res.Pass = res.Passes > 0
	}
	span.SetAttributes(attribute.Bool("eval.pass", res.Pass), attribute.Float64("eval.score", res.Score),
		attribute.Int("eval.passes", res.Passes))
	for _, s := range res.Scores {
		span.SetAttributes(attribute.Float64("eval.score."+s.Scorer, s.Value))
	}
	if !res.Pass {
		span.SetStatus(codes.Error, "case failed")
	}
	return res
}

func meanScore(scores []Score) float64 {
	if len(scores) == 0 {
		return 1
	}
	var sum float64
	for _, s := range scores {
		sum += s.Value
	}
	return sum / float64(len(scores))
}

// score runs every scorer on t and says whether the trial passes.
func (r *Runner) score(ctx context.Context, t *Trial) ([]Score, bool) {
	scorers := DefaultScorers()
	if r.judge != nil {
		scorers = append(scorers, r.judge)
	}
	scorers = append(scorers, r.cfg.Scorers...)
	pass := t.Err == nil
	var out []Score
	for _, sc := range scorers {
		s, err := sc.Score(ctx, t)
		if err != nil {
			s = &Score{Detail: "the scorer failed: " + err.Error()}
		}
		if s == nil {
			continue
		}
		s.Scorer = sc.Name()
		want := 1.0
		if th, ok := t.Case.Thresholds[sc.Name()]; ok {
			want = th
		}
		s.Pass = s.Value >= want-1e-9
		pass = pass && s.Pass
		out = append(out, *s)
	}
	return out, pass
}

// trial runs c once.
func (r *Runner) trial(ctx context.Context, c *Case) *Trial {
	t := &Trial{Case: c}
	var model llm.Model
	var rec *Recorder
	var rep *Replayer
	switch r.cfg.Mode {
	case Replay:
		cas, err := r.cassette(r.CassettePath(c))
		if err != nil {
			t.Err = err
			return t
		}
		rep = NewReplayer(cas, r.cfg.Ignore...)
		model = rep
	case Record:
		rec = NewRecorder(r.cfg.Model)
		model = rec
	default:
		model = r.cfg.Model
	}
	runner, err := r.cfg.Agent(ctx, c, model)
	if err != nil {
		t.Err = err
		return t
	}
	if l := time.Duration(c.Limits.MaxTime); l > 0 {
		// The time limit also bounds the run: a run past it ends.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l)
		defer cancel()
	}
	start := time.Now()
	t.Err = r.stream(ctx, runner, c, t)
	t.Elapsed = time.Since(start)
	if rep != nil {
		if d := rep.Diverged(); d != nil {
			t.Err = d
		} else if n := rep.Remaining(); n > 0 && t.Err == nil {
			t.Err = fmt.Errorf("replay ended with %d recorded turns not asked for", n)
		}
	}
	if rec != nil {
		if err := rec.Cassette().Save(r.CassettePath(c)); err != nil {
			t.Err = errors.Join(t.Err, err)
		}
	}
	return t
}

func (r *Runner) stream(ctx context.Context, runner agent.Runner, c *Case, t *Trial) error {
	ctx = agent.WithInput(ctx, agent.Input{Parts: c.Input.Parts})
	if len(c.History) == 0 && len(c.Before) == 0 {
		for ev, err := range runner.Stream(ctx, c.Input.Text) {
			t.observe(ev)
			if err != nil {
				return err
			}
		}
		return nil
	}
	a, ok := runner.(*agent.Agent)
	if !ok {
		return &failure.Error{Kind: failure.Config, Source: failure.SourceAgent,
			Message: fmt.Sprintf("case %q has a history, which needs an *agent.Agent, not a %T", c.Name, runner)}
	}
	s := a.NewSessionFrom(c.History)
	for _, in := range c.Before {
		if _, err := s.Run(agent.WithInput(ctx, agent.Input{}), in); err != nil {
			return fmt.Errorf("before input %q: %w", clip(in), err)
		}
	}
	for ev, err := range s.Stream(ctx, c.Input.Text) {
		t.observe(ev)
		if err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON writes the report to path.
func (rep *Report) WriteJSON(path string) error {
	b, err := jsonIndent(rep)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// cassette loads the cassette at path once per runner.
func (r *Runner) cassette(path string) (*Cassette, error) {
	if c, ok := r.cassettes.Load(path); ok {
		return c.(*Cassette), nil
	}
	c, err := LoadCassette(path)
	if err != nil {
		return nil, err
	}
	got, _ := r.cassettes.LoadOrStore(path, c)
	return got.(*Cassette), nil
}
