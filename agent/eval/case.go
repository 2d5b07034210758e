package eval

import (
	"encoding/json"
	"time"

	"github.com/switchboard-dev/switchboard/llm"
)

// Case is one evaluation: an input given to the agent under test, what its
// run is expected to do, and the limits it must keep.
type Case struct {
	// Name identifies the case in its set (a subtest's name, a cassette's
	// file name).
	Name string `json:"name"`
	// Input is the prompt of the scored run.
	Input Input `json:"input"`
	// History is the conversation before Input, given to the agent as it
	// is (agent.Agent.NewSessionFrom).
	History []llm.Message `json:"history,omitempty"`
	// Before are user inputs run in the same session before Input, their
	// answers not scored (the earlier invocations of an ADK conversation).
	Before []string `json:"before,omitempty"`
	// Trajectory is the expected tool calls (nil: not scored).
	Trajectory *Trajectory `json:"trajectory,omitempty"`
	// Answer is the expected answer (nil: not scored).
	Answer *Answer `json:"answer,omitempty"`
	// Limits bound the run; a run past one fails the case.
	Limits Limits `json:"limits,omitzero"`
	// Thresholds are the least score each scorer, by name, must reach for
	// the case to pass (default 1 for each scorer that runs).
	Thresholds map[string]float64 `json:"thresholds,omitempty"`
}

// Input is a run's prompt: text and media parts.
type Input struct {
	Text  string     `json:"text"`
	Parts []llm.Part `json:"parts,omitempty"`
}

// UnmarshalJSON takes an Input as an object or as a plain string of text.
func (in *Input) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*in = Input{Text: s}
		return nil
	}
	type plain Input
	return json.Unmarshal(b, (*plain)(in))
}

// Match is how a trajectory is compared with the calls a run made.
type Match string

// Trajectory matches.
const (
	// MatchExact: the same calls in the same order, nothing else.
	MatchExact Match = "exact"
	// MatchInOrder: the expected calls appear in order, others may come
	// between them.
	MatchInOrder Match = "in_order"
	// MatchAnyOrder: the same calls in any order, nothing else.
	MatchAnyOrder Match = "any_order"
	// MatchSubset: the expected calls appear, in any order, others may too.
	MatchSubset Match = "subset"
)

// Trajectory is the tool calls a run is expected to make.
type Trajectory struct {
	// Match is the comparison (default MatchExact).
	Match Match `json:"match,omitempty"`
	// Calls are the expected calls.
	Calls []ExpectedCall `json:"calls"`
	// Forbidden are tools the run must not call at all (a safety case).
	Forbidden []string `json:"forbidden,omitempty"`
}

// ExpectedCall is one expected tool call: the tool's name and, optionally,
// matchers on its arguments.
type ExpectedCall struct {
	Tool string `json:"tool"`
	// Args are matched against the call's arguments: each key of Args must
	// be in the call's, with an equal JSON value (objects compared the same
	// way, recursively, so extra keys of the call are allowed).
	Args map[string]json.RawMessage `json:"args,omitempty"`
	// ArgsRegex are regular expressions the call's argument, by key, must
	// match (a string's value, other values as JSON).
	ArgsRegex map[string]string `json:"args_regex,omitempty"`
}

// Answer is what a run's answer is expected to be. Every field set must
// hold.
type Answer struct {
	// Exact is the whole answer, compared after trimming space.
	Exact string `json:"exact,omitempty"`
	// Contains are texts the answer must contain.
	Contains []string `json:"contains,omitempty"`
	// NotContains are texts the answer must not contain (a leaked secret,
	// the system prompt).
	NotContains []string `json:"not_contains,omitempty"`
	// Regex is a regular expression the answer must match.
	Regex string `json:"regex,omitempty"`
	// Schema is a JSON Schema the answer must be a valid JSON value of
	// (inside a code fence or not).
	Schema json.RawMessage `json:"schema,omitempty"`
	// Rubric is what an LLM judge checks the answer against (Config.Judge).
	Rubric string `json:"rubric,omitempty"`
}

// Limits bound a run; zero fields are no limit.
type Limits struct {
	MaxTurns  int `json:"max_turns,omitempty"`
	MaxTokens int `json:"max_tokens,omitempty"`
	// MaxCostUSD is in dollars (priced by the agent's Config.Prices).
	MaxCostUSD float64  `json:"max_cost_usd,omitempty"`
	MaxTime    Duration `json:"max_time,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("30s").
type Duration time.Duration

// MarshalJSON writes d as "1m30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "1m30s" or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*d = Duration(f * float64(time.Second))
	return nil
}
