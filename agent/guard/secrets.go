package guard

import (
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
// is searched for the keywords first (one pass, keywords by first byte), and a
// rule's expression runs only on the bytes around a keyword it found.
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

// byFirst lists the keywords by their first byte, so that the text is read
// once and a keyword compared only where its first byte is.
var byFirst = func() (t [256][]secretKeyword) {
	for ri := range secretRules {
		for _, kw := range secretRules[ri].keywords {
			t[kw[0]] = append(t[kw[0]], secretKeyword{kw, &secretRules[ri]})
		}
	}
	return t
}()

// scanSecrets appends the secrets of text to ms.
func scanSecrets(text string, ms []Match) []Match {
	for at := 0; at < len(text); at++ {
		for _, k := range byFirst[text[at]] {
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
				at = s + loc[1] - 1
				break
			}
		}
	}
	return ms
}
