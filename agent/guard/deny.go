package guard

import (
	"context"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"

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
	// find finds the words in one pass over ASCII text.
	find *literals
	pats []denyPattern
	// any finds, in one pass, the words and every pattern's literal
	// (ASCII case folded): text without any holds no word (if ASCII) and
	// matches no pattern. Nil when a pattern has no literal known.
	any *literals
}

// denyPattern is a pattern and a literal that every match of it holds,
// found without running the expression (lit "": none known).
type denyPattern struct {
	re  *regexp.Regexp
	lit *literals
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
	d.find = newLiterals(d.words, true)
	for _, p := range cfg.Patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, configErr("guard.DenyConfig.Patterns: %q: %v", p, err)
		}
		dp := denyPattern{re: re}
		if tree, err := syntax.Parse(p, syntax.Perl); err == nil {
			if lit, fold := requiredLiteral(tree); lit != "" {
				dp.lit = newLiterals([]string{lit}, fold)
			}
		}
		d.pats = append(d.pats, dp)
	}
	if len(d.words)+len(d.pats) > 0 {
		all := append([]string(nil), d.words...)
		for _, p := range d.pats {
			if p.lit == nil {
				all = nil
				break
			}
			all = append(all, asciiLower(p.lit.words[0]))
		}
		if all != nil {
			d.any = newLiterals(all, true)
		}
	}
	return d, nil
}

// asciiLower lower-cases the ASCII letters of s (and nothing else, so that
// a folded search for it finds every case of those letters and the other
// bytes as they are).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Local marks the guard as an agent.LocalGuard: it only computes.
func (*DenyList) Local() {}

// Name is the guard's name.
func (d *DenyList) Name() string { return d.name }

// Check trips on the first word or pattern found.
func (d *DenyList) Check(_ context.Context, c agent.GuardCheck) (agent.Verdict, error) {
	if d.any != nil && d.any.find(c.Text, 0) < 0 && (len(d.words) == 0 || isASCII(c.Text)) {
		return agent.Pass(), nil
	}
	return d.check(c.Text), nil
}

// check looks for each word, then each pattern, in text.
func (d *DenyList) check(text string) agent.Verdict {
	if len(d.words) > 0 && (d.find.find(text, 0) >= 0 || !isASCII(text)) {
		low := lower(text)
		for _, w := range d.words {
			if strings.Contains(low, w) {
				return agent.Trip("the text contains the denied word " + quote(w))
			}
		}
	}
	for _, p := range d.pats {
		if p.lit != nil && p.lit.find(text, 0) < 0 {
			continue
		}
		if p.re.MatchString(text) {
			return agent.Trip("the text matches the denied pattern " + quote(p.re.String()))
		}
	}
	return agent.Pass()
}

// requiredLiteral returns the longest literal that every match of re
// holds (lower-cased, to be found ASCII case-insensitively, when fold is
// set), or "" when none is known. A case-insensitive literal qualifies
// only if no letter of it folds to a byte outside ASCII (as 'k' does to
// the Kelvin sign).
func requiredLiteral(re *syntax.Regexp) (lit string, fold bool) {
	switch re.Op {
	case syntax.OpLiteral:
		fold = re.Flags&syntax.FoldCase != 0
		var b strings.Builder
		for _, r := range re.Rune {
			if r >= utf8.RuneSelf {
				if fold || r == utf8.RuneError {
					return "", false
				}
				b.WriteRune(r)
				continue
			}
			if fold {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					if f >= utf8.RuneSelf {
						return "", false
					}
				}
				r = unicode.ToLower(r)
			}
			b.WriteRune(r)
		}
		return b.String(), fold
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if l, f := requiredLiteral(sub); len(l) > len(lit) {
				lit, fold = l, f
			}
		}
		return lit, fold
	}
	return "", false
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
