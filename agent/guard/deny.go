package guard

import (
	"context"
	"regexp"
	"strings"

	"github.com/switchboard-dev/switchboard/agent"
)

// DenyConfig configures a deny-list.
type DenyConfig struct {
	// Name is the guard's name (default "deny-list").
	Name string
	// Words trip when they occur in the text, case-insensitively.
	Words []string
	// Patterns are regular expressions (RE2 syntax) that trip when they
	// match.
	Patterns []string
}

// DenyList trips on words or patterns.
type DenyList struct {
	name  string
	words []string
	res   []*regexp.Regexp
}

// NewDenyList returns the deny-list; an invalid pattern is an error naming
// it.
func NewDenyList(cfg DenyConfig) (*DenyList, error) {
	d := &DenyList{name: cfg.Name}
	if d.name == "" {
		d.name = "deny-list"
	}
	for _, w := range cfg.Words {
		if w != "" {
			d.words = append(d.words, strings.ToLower(w))
		}
	}
	for _, p := range cfg.Patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, configErr("guard.DenyConfig.Patterns: %q: %v", p, err)
		}
		d.res = append(d.res, re)
	}
	return d, nil
}

// Local marks the guard as an agent.LocalGuard: it only computes.
func (*DenyList) Local() {}

// Name is the guard's name.
func (d *DenyList) Name() string { return d.name }

// Check trips on the first word or pattern found.
func (d *DenyList) Check(_ context.Context, c agent.GuardCheck) (agent.Verdict, error) {
	if len(d.words) > 0 {
		low := lower(c.Text)
		for _, w := range d.words {
			if strings.Contains(low, w) {
				return agent.Trip("the text contains the denied word " + quote(w)), nil
			}
		}
	}
	for _, re := range d.res {
		if re.MatchString(c.Text) {
			return agent.Trip("the text matches the denied pattern " + quote(re.String())), nil
		}
	}
	return agent.Pass(), nil
}

// lower lower-cases ASCII text without allocating when it has no upper
// case; other text goes through strings.ToLower.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return strings.ToLower(s)
		}
		if c >= 'A' && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}
