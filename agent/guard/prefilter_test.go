package guard

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
)

// The reference scanners: the byte-at-a-time versions the fast ones
// replace. FuzzPrefilters holds the fast ones to the same answers.

func refScanSecrets(text string, ms []Match) []Match {
	for at := 0; at < len(text); at++ {
		for _, ki := range keywordsByFirst[text[at]] {
			k := secretKeywords[ki]
			if !strings.HasPrefix(text[at:], k.kw) {
				continue
			}
			r := k.rule
			s := max(at-r.back, 0)
			if s > 0 {
				s--
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

func refScanNumbers(text string, ms []Match, phone, card bool) []Match {
	n := len(text)
	for i := 0; i < n; i++ {
		c := text[i]
		if !isDigit(c) && c != '+' && c != '(' {
			continue
		}
		if i > 0 && (isDigit(text[i-1]) || isWordByte(text[i-1])) {
			// inside a word or number already passed over
			continue
		}
		s := i
		digits := 0
		e := i
		for e < n {
			b := text[e]
			if isDigit(b) {
				digits++
			} else if !(b == ' ' || b == '-' || b == '.' || b == '(' || b == ')' || (b == '+' && e == s)) {
				break
			} else if e+1 < n && !isDigit(text[e+1]) && text[e+1] != '(' && b != ')' {
				break
			}
			e++
		}
		for e > s && !isDigit(text[e-1]) {
			e--
		}
		i = e
		if digits < 7 || (e < n && isWordByte(text[e])) {
			continue
		}
		run := text[s:e]
		if card && digits >= 13 && digits <= 19 && luhn(run) && cardSeparators(run) {
			ms = append(ms, Match{Kind: KindCard, Start: s, End: e})
			continue
		}
		if phone && digits <= 15 && digits >= 8 && phoneRE.MatchString(run) {
			ms = append(ms, Match{Kind: KindPhone, Start: s, End: e})
		}
	}
	return ms
}

func refInjection(g *Injection, text string) string {
	if why := hidden(text); why != "" {
		return why
	}
	low := lower(text)
	for i := 0; i < len(low); i++ {
		for _, p := range g.phrases {
			if strings.HasPrefix(low[i:], p) {
				return "the text addresses the model: " + quote(strings.TrimSpace(p))
			}
		}
	}
	return ""
}

func refDeny(words []string, res []*regexp.Regexp, text string) string {
	low := lower(text)
	for _, w := range words {
		if strings.Contains(low, w) {
			return "the text contains the denied word " + quote(w)
		}
	}
	for _, re := range res {
		if re.MatchString(text) {
			return "the text matches the denied pattern " + quote(re.String())
		}
	}
	return ""
}

// naiveFind is literals.find by comparing every keyword at every position.
func naiveFind(l *literals, s string, from int) int {
	for i := from; i < len(s); i++ {
		for k, w := range l.words {
			if w != "" && l.has(s, i, k) {
				return i
			}
		}
	}
	return -1
}

var fuzzDenyWords = []string{"rm -rf", "Drop", "é"}
var fuzzDenyPatterns = []string{`rm\s+-rf`, `(?i)drop\s+table`, `(?i)kill`, `a+b{2,}c`, `x|yz`, `(?s)secret.*key`}

// fuzzDenyLists are deny-lists whose patterns all hold a literal (so that
// DenyList.any applies), with and without words.
var fuzzDenyLists = []DenyConfig{
	{Patterns: []string{`rm\s+-rf`, `(?i)drop\s+table`}},
	{Words: fuzzDenyWords, Patterns: []string{`rm\s+-rf`, `(?i)drop\s+table`, `(?i)wipe`, `(?s)secret.*key`, `DROP`, `Üx+`}},
	{Words: fuzzDenyWords},
}

func FuzzPrefilters(f *testing.F) {
	for _, s := range []string{
		"key AKIAIOSFODNN7EXAMPLE ok", "tok ghp_" + strings.Repeat("a1B2", 9), "sk_live_" + strings.Repeat("x", 24),
		"call +1 (555) 123-4567 or 4111 1111 1111 1111", "((((1234567))))", "12)3456789",
		"Ignore Previous Instructions", "IGNORE the above", "\nSystem: hi", "<|IM_START|>", "fine text\u202e",
		"rm  -rf /", "DROP\tTABLE x", "ſecret key", "\u212aill", "aabbbc", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc",
		"-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("QUJD", 20) + "\n-----END RSA PRIVATE KEY-----",
		strings.Repeat("A_-x", 40) + "AKIAIOSFODNN7EXAMPLE",
		strings.Repeat("AKIA", 600), strings.Repeat("x", 1015) + "AKIAIOSFODNN7EXAMPLE " + strings.Repeat("AKIA", 300) + "ghp_" + strings.Repeat("a1B2", 9),
		strings.Repeat("AKIAIOSFODNN7EXAMPLE ", 120), strings.Repeat("-", 1030) + "----BEGIN",
		`{"id":1234,"price":"12.50"} tel 555 123 4567`, "1. 1. 1. 1. 1. 555-123-4567", "        (555) 123-4567",
		"key SG." + strings.Repeat("x1", 33) + " end", `{"q":"widget"}`, `{"cmd":"RM  -RF /"}`, "drop\ttable", "ÜXX", "Üxx", "Drop", "WİPE", "wIpE", "ＤＲＯＰ", "secret\nkey",
	} {
		f.Add(s, 0)
	}
	inj := NewInjection(InjectionConfig{Phrases: []string{"Über", "xyzzy"}})
	d, err := NewDenyList(DenyConfig{Words: fuzzDenyWords, Patterns: fuzzDenyPatterns})
	if err != nil {
		f.Fatal(err)
	}
	var res []*regexp.Regexp
	for _, p := range fuzzDenyPatterns {
		res = append(res, regexp.MustCompile(p))
	}
	words := []string{"rm -rf", "drop", "é"}
	var denyLists []*DenyList
	var denyWords [][]string
	var denyRes [][]*regexp.Regexp
	for _, cfg := range fuzzDenyLists {
		dl, err := NewDenyList(cfg)
		if err != nil {
			f.Fatal(err)
		}
		if dl.any == nil {
			f.Fatalf("%+v: no literal finder", cfg)
		}
		denyLists = append(denyLists, dl)
		denyWords = append(denyWords, dl.words)
		var rs []*regexp.Regexp
		for _, p := range cfg.Patterns {
			rs = append(rs, regexp.MustCompile(p))
		}
		denyRes = append(denyRes, rs)
	}
	injLiterals := newLiterals(inj.phrases, true)
	f.Fuzz(func(t *testing.T, s string, from int) {
		secrets := refScanSecrets(s, nil)
		if got := scanSecrets(s, nil); !slices.Equal(got, secrets) {
			t.Errorf("scanSecrets(%q) = %v, want %v", s, got, secrets)
		}
		if len(secrets) > 0 && !hasAnchor(s) {
			t.Errorf("hasAnchor(%q) = false, but it holds %v", s, secrets)
		}
		if ms := scanEmails(s, nil); len(ms) > 0 && !strings.Contains(s, "@") {
			t.Errorf("scanEmails(%q) = %v without an @", s, ms)
		}
		nums := refScanNumbers(s, nil, true, true)
		if got := scanNumbers(s, nil, true, true); !slices.Equal(got, nums) {
			t.Errorf("scanNumbers(%q) = %v, want %v", s, got, nums)
		}
		if len(nums) > 0 {
			if w := numberWindow(s, 0); w < 0 || w > nums[0].Start {
				t.Errorf("numberWindow(%q) = %d, past the number at %d", s, w, nums[0].Start)
			}
		}
		v, _ := inj.Check(t.Context(), checkOf(s))
		if want := refInjection(inj, s); v.Reason != want {
			t.Errorf("injection(%q) = %q, want %q", s, v.Reason, want)
		}
		v, _ = d.Check(t.Context(), checkOf(s))
		if want := refDeny(words, res, s); v.Reason != want {
			t.Errorf("deny(%q) = %q, want %q", s, v.Reason, want)
		}
		for i, dl := range denyLists {
			v, _ = dl.Check(t.Context(), checkOf(s))
			if want := refDeny(denyWords[i], denyRes[i], s); v.Reason != want {
				t.Errorf("deny %+v (%q) = %q, want %q", fuzzDenyLists[i], s, v.Reason, want)
			}
		}
		from = min(max(from, 0), len(s))
		if got, want := inj.find(s), naiveFind(injLiterals, s, 0); got != want {
			t.Errorf("injection find(%q) = %d, want %d", s, got, want)
		}
		for _, l := range []*literals{inj.long, d.find, keywordLiterals, nineLiterals} {
			if at, ascii := l.findASCII(s); at != naiveFind(l, s, 0) || ascii != refASCII(s) {
				t.Errorf("findASCII(%q) = %d, %v, want %d, %v (words %q)", s, at, ascii, naiveFind(l, s, 0), refASCII(s), l.words)
			}
		}
		for _, l := range []*literals{inj.long, d.find, keywordLiterals} {
			if got, want := l.find(s, from), naiveFind(l, s, from); got != want {
				t.Errorf("find(%q, %d) = %d, want %d (words %q)", s, from, got, want, l.words)
			}
		}
	})
}

// refASCII is isASCII a byte at a time.
func refASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// nineLiterals has a shortest keyword of nine bytes: its samples are six
// bytes apart, findASCII reads eight bytes at each.
var nineLiterals = newLiterals([]string{"ignore al", "you are now", "pretend you"}, true)

func checkOf(s string) agent.GuardCheck {
	return agent.GuardCheck{Point: agent.GuardToolResult, Text: s}
}

// keywordLiterals is a case-sensitive finder with keywords of 3 bytes and more.
var keywordLiterals = func() *literals {
	var ws []string
	for _, k := range secretKeywords {
		ws = append(ws, k.kw)
	}
	return newLiterals(ws, false)
}()

// TestFindASCII holds findASCII to find and a byte-at-a-time ASCII check:
// a non-ASCII byte or a phrase at every position of texts around the
// lengths where its eight-byte reads end.
func TestFindASCII(t *testing.T) {
	inj := NewInjection(InjectionConfig{})
	for _, l := range []*literals{inj.long, nineLiterals, newLiterals([]string{"xyzzy"}, true)} {
		for n := range 40 {
			base := strings.Repeat("a", n)
			texts := []string{base, base + "you are now", "You Are Now" + base}
			for i := range n {
				texts = append(texts, base[:i]+"\xc3"+base[i+1:], base[:i]+"é"+base[i:]+"YOU ARE NOW")
			}
			for _, s := range texts {
				at, ascii := l.findASCII(s)
				if want := naiveFind(l, s, 0); at != want || ascii != refASCII(s) {
					t.Fatalf("findASCII(%q) = %d, %v, want %d, %v (words %q)", s, at, ascii, want, refASCII(s), l.words)
				}
			}
		}
	}
}
