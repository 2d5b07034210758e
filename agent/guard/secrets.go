package guard

import (
	"bytes"
	"regexp"
	"strings"
)

// The secret rules are ported from gitleaks (github.com/gitleaks/gitleaks,
// config/gitleaks.toml, MIT licence, Copyright (c) 2019 Zachary Rice),
// rule ids kept: aws-access-token, github-pat, github-oauth,
// github-app-token, github-fine-grained-pat, gitlab-pat, slack-bot-token,
// slack-user-token, stripe-access-token, openai-api-key,
// anthropic-api-key, gcp-api-key, npm-access-token, sendgrid-api-token,
// jwt and private-key. As gitleaks does, each rule has keywords: the text
// is searched for the keywords first (around bytes rare in text, see
// keywordStarts), and a rule's expression runs only on the bytes around a
// keyword it found.
// Unlike gitleaks, keywords are matched in the case the tokens are issued
// in, and the generic-api-key rule (entropy-based) is left out.
type secretRule struct {
	id       string
	keywords []string
	re       *regexp.Regexp
	// back is how far before a keyword a match may start; span how far
	// after it it may end.
	back, span int
}

var secretRules = []secretRule{
	{id: "aws-access-token", keywords: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
		re: regexp.MustCompile(`\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b`), span: 24},
	{id: "github-pat", keywords: []string{"ghp_"}, re: regexp.MustCompile(`ghp_[0-9a-zA-Z]{36}`), span: 44},
	{id: "github-oauth", keywords: []string{"gho_"}, re: regexp.MustCompile(`gho_[0-9a-zA-Z]{36}`), span: 44},
	{id: "github-app-token", keywords: []string{"ghu_", "ghs_"}, re: regexp.MustCompile(`(?:ghu|ghs)_[0-9a-zA-Z]{36}`), span: 44},
	{id: "github-fine-grained-pat", keywords: []string{"github_pat_"}, re: regexp.MustCompile(`github_pat_\w{82}`), span: 96},
	{id: "gitlab-pat", keywords: []string{"glpat-"}, re: regexp.MustCompile(`glpat-[\w-]{20}`), span: 30},
	{id: "slack-bot-token", keywords: []string{"xoxb-"}, re: regexp.MustCompile(`xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*`), span: 120},
	{id: "slack-user-token", keywords: []string{"xoxp-", "xoxe-"}, re: regexp.MustCompile(`xox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28,34}`), span: 120},
	{id: "stripe-access-token", keywords: []string{"sk_test", "sk_live", "sk_prod", "rk_test", "rk_live", "rk_prod"},
		re: regexp.MustCompile(`\b(?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99}\b`), span: 112},
	{id: "openai-api-key", keywords: []string{"T3BlbkFJ"},
		re:   regexp.MustCompile(`\b(?:sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{58,74}T3BlbkFJ[A-Za-z0-9_-]{58,74}|sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20})\b`),
		back: 96, span: 96},
	{id: "anthropic-api-key", keywords: []string{"sk-ant-api03", "sk-ant-admin01"},
		re: regexp.MustCompile(`sk-ant-(?:api03|admin01)-[a-zA-Z0-9_\-]{93}AA`), span: 120},
	{id: "gcp-api-key", keywords: []string{"AIza"}, re: regexp.MustCompile(`\bAIza[\w-]{35}\b`), span: 40},
	{id: "npm-access-token", keywords: []string{"npm_"}, re: regexp.MustCompile(`\bnpm_[a-zA-Z0-9]{36}\b`), span: 40},
	{id: "sendgrid-api-token", keywords: []string{"SG."}, re: regexp.MustCompile(`SG\.[a-zA-Z0-9=_\-\.]{66}`), span: 70},
	{id: "jwt", keywords: []string{"eyJ"},
		re: regexp.MustCompile(`\bey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9/\\_-]{17,}\.(?:[a-zA-Z0-9/\\_-]{10,}={0,2})?`), span: 4096},
	{id: "private-key", keywords: []string{"-----BEGIN"},
		re: regexp.MustCompile(`-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S-]{64,}?KEY(?: BLOCK)?-----`), span: 16384},
}

// secretKeyword is a keyword of a rule.
type secretKeyword struct {
	kw   string
	rule *secretRule
}

// secretKeywords are the rules' keywords in rule order.
var secretKeywords = func() []secretKeyword {
	var ks []secretKeyword
	for ri := range secretRules {
		for _, kw := range secretRules[ri].keywords {
			ks = append(ks, secretKeyword{kw, &secretRules[ri]})
		}
	}
	return ks
}()

// keywordsByFirst lists the keywords (indexes in secretKeywords) by their
// first byte, in rule order.
var keywordsByFirst = func() (t [256][]int) {
	for i, k := range secretKeywords {
		t[k.kw[0]] = append(t[k.kw[0]], i)
	}
	return t
}()

// An anchor is a byte of a keyword that is rare in text (an upper-case
// letter, '_', 'x', '-'), the keywords holding it and where: the text is
// searched for each anchor byte with strings.IndexByte (vector
// instructions), and a keyword compared only around its anchor.
type anchor struct {
	b    byte
	refs []anchorRef
}

type anchorRef struct{ k, off int }

// rarity ranks a byte's frequency in text, rarest first.
func rarity(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return 1
	case c == '_' || c == 'x' || c == 'z' || c == 'q' || c == 'j':
		return 2
	case c == '-' || c == '.':
		return 3
	case c >= '0' && c <= '9':
		return 4
	case c == ' ':
		return 6
	}
	return 5
}

// secretAnchors are the keywords' anchors: bytes of rarity 3 or less
// chosen greedily, the one held by the most keywords not yet anchored
// first (the rarer on a tie), so that few bytes are searched for; each
// keyword is anchored at the first such byte. A keyword without one is
// anchored at its rarest byte.
var secretAnchors = func() []anchor {
	anchored := make([]bool, len(secretKeywords))
	var as []anchor
	add := func(b byte) {
		a := anchor{b: b}
		for i, k := range secretKeywords {
			if off := strings.IndexByte(k.kw, b); off >= 0 && !anchored[i] {
				anchored[i] = true
				a.refs = append(a.refs, anchorRef{i, off})
			}
		}
		as = append(as, a)
	}
	var cands []byte // the keywords' bytes of rarity 3 or less
	for _, k := range secretKeywords {
		for j := 0; j < len(k.kw); j++ {
			if c := k.kw[j]; rarity(c) <= 3 && bytes.IndexByte(cands, c) < 0 {
				cands = append(cands, c)
			}
		}
	}
	for {
		best, bestN := byte(0), 0
		for _, c := range cands {
			n := 0
			for i, k := range secretKeywords {
				if !anchored[i] && strings.IndexByte(k.kw, c) >= 0 {
					n++
				}
			}
			if n > bestN || n == bestN && n > 0 && rarity(c) < rarity(best) {
				best, bestN = c, n
			}
		}
		if bestN == 0 {
			break
		}
		add(best)
	}
	for i, k := range secretKeywords {
		if !anchored[i] {
			off := 0
			for j := 1; j < len(k.kw); j++ {
				if rarity(k.kw[j]) < rarity(k.kw[off]) {
					off = j
				}
			}
			add(k.kw[off])
		}
	}
	return as
}()

// The text is scanned in blocks of secretBlock bytes; maxStarts bounds the
// keyword starts collected in a block before the block is read byte by
// byte instead.
const (
	secretBlock = 1024
	maxStarts   = 64
)

// maxAnchorOff is the largest offset of an anchor in its keyword.
var maxAnchorOff = func() (m int) {
	for _, a := range secretAnchors {
		for _, r := range a.refs {
			m = max(m, r.off)
		}
	}
	return m
}()

// keywordStarts appends to starts, in order and without repeats, every
// position in [lo, hi) where a keyword starts; ok is false past maxStarts.
func keywordStarts(text string, lo, hi int, starts []int) (_ []int, ok bool) {
	end := min(hi+maxAnchorOff, len(text))
	for _, a := range secretAnchors {
		for off := lo; off < end; {
			i := strings.IndexByte(text[off:end], a.b)
			if i < 0 {
				break
			}
			at := off + i
			off = at + 1
			for _, r := range a.refs {
				p := at - r.off
				if p < lo || p >= hi || !strings.HasPrefix(text[p:], secretKeywords[r.k].kw) {
					continue
				}
				if len(starts) == maxStarts {
					return starts, false
				}
				starts = insertStart(starts, p)
			}
		}
	}
	return starts, true
}

// insertStart inserts p into the sorted starts, once.
func insertStart(starts []int, p int) []int {
	i := len(starts)
	for i > 0 && starts[i-1] > p {
		i--
	}
	if i > 0 && starts[i-1] == p {
		return starts
	}
	starts = append(starts, 0)
	copy(starts[i+1:], starts[i:])
	starts[i] = p
	return starts
}

// scanSecrets appends the secrets of text to ms: at each position where a
// keyword starts, in order, the keywords there are tried in rule order,
// and the first rule whose expression matches around it wins; the scan
// goes on after the match.
func scanSecrets(text string, ms []Match) []Match {
	var buf [16]int // most blocks hold fewer starts (more grow it, up to maxStarts)
	next := 0       // where the scan goes on
	for lo := 0; lo < len(text); lo += secretBlock {
		hi := min(lo+secretBlock, len(text))
		starts, ok := keywordStarts(text, lo, hi, buf[:0])
		if !ok {
			// Too many keywords: every position of the block.
			for at := max(lo, next); at < hi; at++ {
				if len(keywordsByFirst[text[at]]) > 0 {
					var n int
					if ms, n = secretAt(text, at, ms); n > at {
						next, at = n, n-1
					}
				}
			}
			continue
		}
		for _, at := range starts {
			if at < next {
				continue
			}
			var n int
			if ms, n = secretAt(text, at, ms); n > at {
				next = n
			}
		}
	}
	return ms
}

// secretAt tries the keywords at text[at:] in rule order; it returns ms
// with the first rule's match around it and where the match ends (or at).
func secretAt(text string, at int, ms []Match) ([]Match, int) {
	for _, ki := range keywordsByFirst[text[at]] {
		k := secretKeywords[ki]
		if !strings.HasPrefix(text[at:], k.kw) {
			continue
		}
		r := k.rule
		s := max(at-r.back, 0)
		if s > 0 {
			s-- // room for \b
		}
		e := min(at+r.span+1, len(text))
		if loc := r.re.FindStringIndex(text[s:e]); loc != nil && s+loc[1] > at {
			ms = append(ms, Match{Kind: KindSecret, Rule: r.id, Start: s + loc[0], End: s + loc[1]})
			return ms, s + loc[1]
		}
	}
	return ms, at
}
