package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/switchboard-dev/switchboard/failure"
)

// maxSetBytes bounds a set file.
const maxSetBytes = 16 << 20

// Set is a named list of cases run together.
type Set struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Repeat runs each case k times (pass@k: a case passes when one of its
	// k trials does; default 1).
	Repeat int    `json:"repeat,omitempty"`
	Cases  []Case `json:"cases"`
	// Skipped are cases of an imported set that cannot run here, with why.
	Skipped []Skip `json:"skipped,omitempty"`
}

// Skip is a case left out of an imported set.
type Skip struct {
	Case   string `json:"case"`
	Reason string `json:"reason"`
}

// Load reads a set from a file: JSON (.json) or YAML (.yaml, .yml), in
// Switchboard's format or ADK's evalset format (recognised by its
// "eval_set_id" or "eval_cases" keys). A set without a name takes the
// file's base name.
func Load(path string) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, setErr(path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSetBytes+1))
	if err != nil {
		return nil, setErr(path, err)
	}
	if len(b) > maxSetBytes {
		return nil, setErr(path, fmt.Errorf("larger than %d bytes", maxSetBytes))
	}
	s, err := Parse(b)
	if err != nil {
		return nil, setErr(path, err)
	}
	if s.Name == "" {
		base := filepath.Base(path)
		s.Name = strings.TrimSuffix(base, filepath.Ext(base))
		s.Name = strings.TrimSuffix(s.Name, ".evalset")
	}
	return s, nil
}

func setErr(path string, err error) error {
	return &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Err: err,
		Message: fmt.Sprintf("eval set %s: %v", path, err)}
}

// Parse reads a set from JSON or YAML (see [Load]).
func Parse(b []byte) (*Set, error) {
	trim := bytes.TrimSpace(b)
	if len(trim) == 0 {
		return nil, fmt.Errorf("empty eval set")
	}
	js := trim
	if trim[0] != '{' {
		var v any
		if err := yaml.Unmarshal(trim, &v); err != nil {
			return nil, fmt.Errorf("not JSON or YAML: %w", err)
		}
		out, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("YAML that has no JSON form: %w", err)
		}
		js = out
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(js, &keys); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if _, ok := keys["eval_cases"]; ok {
		return parseADK(js)
	}
	if _, ok := keys["eval_set_id"]; ok {
		return parseADK(js)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var s Set
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("not an eval set: %w", err)
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return &s, nil
}

// check reports the first case a set cannot run.
func (s *Set) check() error {
	seen := map[string]bool{}
	for i, c := range s.Cases {
		switch {
		case c.Name == "":
			return fmt.Errorf("case %d has no name", i)
		case seen[c.Name]:
			return fmt.Errorf("case %q appears twice", c.Name)
		case c.Input.Text == "" && len(c.Input.Parts) == 0:
			return fmt.Errorf("case %q has no input", c.Name)
		}
		seen[c.Name] = true
		if t := c.Trajectory; t != nil {
			switch t.Match {
			case "", MatchExact, MatchInOrder, MatchAnyOrder, MatchSubset:
			default:
				return fmt.Errorf("case %q: unknown trajectory match %q (exact, in_order, any_order, subset)", c.Name, t.Match)
			}
			for _, call := range t.Calls {
				for k, re := range call.ArgsRegex {
					if _, err := compileRegex(re); err != nil {
						return fmt.Errorf("case %q: args_regex %s of %s: %w", c.Name, k, call.Tool, err)
					}
				}
			}
		}
		if a := c.Answer; a != nil && a.Regex != "" {
			if _, err := compileRegex(a.Regex); err != nil {
				return fmt.Errorf("case %q: answer regex: %w", c.Name, err)
			}
		}
	}
	return nil
}
