package guard

import (
	"context"
	"fmt"
	"math/bits"
	"regexp"
	"sort"
	"strings"

	"github.com/switchboard-dev/switchboard/agent"
)

// PII kinds, as matches and redactions name them.
const (
	KindEmail  = "email"
	KindPhone  = "phone"
	KindCard   = "card"
	KindSecret = "secret"
)

// PIIConfig configures the PII guard. The zero value redacts every kind.
type PIIConfig struct {
	// Name is the guard's name (default "pii").
	Name string
	// Kinds limits the kinds detected (KindEmail, KindPhone, KindCard,
	// KindSecret; empty: all).
	Kinds []string
	// Block trips on a match instead of redacting it.
	Block bool
}

// PII detects emails, phone numbers, card numbers (Luhn-checked) and keys
// and tokens (rules ported from gitleaks, see secrets.go), and redacts them
// as "[REDACTED:<kind>]" or trips.
type PII struct {
	name                       string
	email, phone, card, secret bool
	block                      bool
}

// NewPII returns the PII guard.
func NewPII(cfg PIIConfig) *PII {
	p := &PII{name: cfg.Name, block: cfg.Block}
	if p.name == "" {
		p.name = "pii"
	}
	kinds := cfg.Kinds
	if len(kinds) == 0 {
		kinds = []string{KindEmail, KindPhone, KindCard, KindSecret}
	}
	for _, k := range kinds {
		switch k {
		case KindEmail:
			p.email = true
		case KindPhone:
			p.phone = true
		case KindCard:
			p.card = true
		case KindSecret:
			p.secret = true
		}
	}
	return p
}

// Local marks the guard as an agent.LocalGuard: it only computes.
func (*PII) Local() {}

// Name is the guard's name.
func (p *PII) Name() string { return p.name }

// Check redacts or trips on what Scan finds.
func (p *PII) Check(_ context.Context, c agent.GuardCheck) (agent.Verdict, error) {
	ms := p.scan(c.Text)
	if len(ms) == 0 {
		return agent.Pass(), nil
	}
	return p.verdict(c.Text, ms), nil
}

// verdict is the trip or redaction of the matches ms of text.
func (p *PII) verdict(text string, ms []Match) agent.Verdict {
	counts := map[string]int{}
	for _, m := range ms {
		counts[m.Kind]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var why []string
	for _, k := range keys {
		why = append(why, fmt.Sprintf("%d %s", counts[k], k))
	}
	reason := "found " + strings.Join(why, ", ")
	if p.block {
		return agent.Trip(reason)
	}
	return agent.Rewrite(Redact(text, ms), "redacted "+strings.Join(why, ", "))
}

// Match is a span of text Scan found.
type Match struct {
	Kind string
	// Rule names the secret rule (a gitleaks rule id) of a KindSecret.
	Rule       string
	Start, End int
}

// Scan returns every match of every kind in text, in order, without
// overlaps.
func Scan(text string) []Match { return allPII.scan(text) }

var allPII = NewPII(PIIConfig{})

// scan runs each kind's scanner on text that may hold one of its matches
// (a secret keyword's anchor byte, an '@', a window of number bytes): on
// clean text, little code is fetched beyond these checks.
func (p *PII) scan(text string) []Match {
	var ms []Match
	if p.secret && hasAnchor(text) {
		ms = scanSecrets(text, ms)
	}
	if p.email && strings.IndexByte(text, '@') >= 0 {
		ms = scanEmails(text, ms)
	}
	if p.phone || p.card {
		if win := numberWindow(text, 0); win >= 0 {
			ms = scanNumbersFrom(text, ms, p.phone, p.card, win)
		}
	}
	if len(ms) < 2 {
		return ms
	}
	return merge(ms)
}

// merge sorts the matches by start and merges those that overlap.
func merge(ms []Match) []Match {
	sort.Slice(ms, func(i, j int) bool { return ms[i].Start < ms[j].Start })
	out := ms[:1]
	for _, m := range ms[1:] {
		if last := &out[len(out)-1]; m.Start < last.End {
			if m.End > last.End {
				last.End = m.End
			}
			continue
		}
		out = append(out, m)
	}
	return out
}

// Redact replaces each match in text by "[REDACTED:<kind>]".
func Redact(text string, ms []Match) string {
	var b strings.Builder
	b.Grow(len(text))
	at := 0
	for _, m := range ms {
		b.WriteString(text[at:m.Start])
		b.WriteString("[REDACTED:" + m.Kind + "]")
		at = m.End
	}
	b.WriteString(text[at:])
	return b.String()
}

// Emails: each '@' is found with IndexByte and the address grown around
// it, so the text is not run through a regular expression.

func isLocal(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

func isDomain(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-'
}

func scanEmails(text string, ms []Match) []Match {
	for off := 0; ; {
		i := strings.IndexByte(text[off:], '@')
		if i < 0 {
			return ms
		}
		at := off + i
		off = at + 1
		s := at
		for s > 0 && isLocal(text[s-1]) {
			s--
		}
		e := at + 1
		for e < len(text) && isDomain(text[e]) {
			e++
		}
		for e > at+1 && (text[e-1] == '.' || text[e-1] == '-') {
			e--
		}
		if s == at || e == at+1 {
			continue
		}
		dom := text[at+1 : e]
		dot := strings.LastIndexByte(dom, '.')
		if dot <= 0 || len(dom)-dot-1 < 2 {
			continue
		}
		tld := dom[dot+1:]
		letters := true
		for j := 0; j < len(tld); j++ {
			if c := tld[j]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				letters = false
			}
		}
		if !letters {
			continue
		}
		ms = append(ms, Match{Kind: KindEmail, Start: s, End: e})
		off = e
	}
}

// Numbers: one pass finds runs of digits with the separators phone and
// card numbers use; a run of 13 to 19 digits that passes Luhn is a card,
// and a run that looks like a phone number (phoneRE, on the run only) is
// a phone. The runs are looked for only from a window of eight bytes that
// may be a number's (numberWindow), found by skipping eight bytes at a
// time.

var phoneRE = regexp.MustCompile(`^(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]\d{2,4}){1,4}$|^\+\d{8,15}$`)

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func scanNumbers(text string, ms []Match, phone, card bool) []Match {
	return scanNumbersFrom(text, ms, phone, card, numberWindow(text, 0))
}

// scanNumbersFrom is scanNumbers with win, numberWindow(text, 0).
func scanNumbersFrom(text string, ms []Match, phone, card bool, win int) []Match {
	if win < 0 {
		return ms
	}
	n := len(text)
	start := win // from the start of the number bytes around win, as below
	for start > 0 && isNumberByte(text[start-1]) {
		start--
	}
	for i := start; i < n; i++ {
		if i > win {
			// No number starts before the next window: on from the start
			// of the number bytes around it, where the byte-at-a-time scan
			// would be too (each such byte ends every run before it).
			if win = numberWindow(text, i); win < 0 {
				break
			}
			a := win
			for a > i && isNumberByte(text[a-1]) {
				a--
			}
			i = a
		}
		if i = nextNumberStart(text, i); i >= n {
			break
		}
		if i > 0 && (isDigit(text[i-1]) || isWordByte(text[i-1])) {
			// inside a word or number already passed over
			continue
		}
		if k := digitsAt(text, i); k > 0 && k < 7 {
			// A run of k < 7 digits that ends at a byte the run cannot
			// hold: too short, and the loop below would end it there too.
			i += k
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

// isNumberByte reports whether c may be in a phone or card number: a digit
// or one of the separators scanNumbers lets a run hold.
func isNumberByte(c byte) bool {
	return isDigit(c) || c == ' ' || c == '-' || c == '.' || c == '(' || c == ')' || c == '+'
}

// numberWindow is the first position at or after from where eight bytes
// in a row may be bytes of one phone or card number, or -1 if there is
// none. A number has eight digits or more (seven make neither), and each
// of its bytes is a digit, '(', ')' or '+', or a ' ', '-' or '.' followed
// by one of those (else the run ends there): such a byte is numberByteAt.
// The text is probed at the last byte of each candidate window, as
// Boyer-Moore-Horspool does, so text whose numbers are short (JSON ids,
// prices) or rare (prose) costs about one table look-up per eight bytes.
func numberWindow(text string, from int) int {
	n := len(text)
	for i := max(from, 0); ; {
		// No window starts in [from, i): those starting in [i, i+7] all
		// hold i+7, the next probe.
		j := i + 7
		for ; j < n && numberClass[text[j]] == 0; j += 8 {
		}
		if j >= n {
			return -1
		}
		i = j - 7
		if !numberByteAt(text, j) {
			i = j + 1
			continue
		}
		k := j - 1
		for k >= i && numberByteAt(text, k) {
			k--
		}
		if k < i {
			return i
		}
		i = k + 1 // every window holding k starts at k or before
	}
}

// numberClass is, by byte, numDigitParen for a digit, '(', ')' and '+'
// and numSeparator for ' ', '-' and '.'.
var numberClass = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = numDigitParen
	}
	for _, c := range "()+" {
		t[c] = numDigitParen
	}
	for _, c := range " -." {
		t[c] = numSeparator
	}
	return t
}()

// The classes of numberClass.
const (
	numDigitParen = 1 << iota
	numSeparator
)

// numberByteAt reports whether text[i] may be a byte of a phone or card
// number (see numberWindow).
func numberByteAt(text string, i int) bool {
	switch numberClass[text[i]] {
	case numDigitParen:
		return true
	case numSeparator:
		return i+1 < len(text) && numberClass[text[i+1]] == numDigitParen
	}
	return false
}

// anchorBytes are the secret keywords' anchor bytes (secretAnchors).
var anchorBytes = func() string {
	var b []byte
	for _, a := range secretAnchors {
		b = append(b, a.b)
	}
	return string(b)
}()

// hasAnchor reports whether text holds an anchor byte: text without one
// holds no secret keyword.
func hasAnchor(text string) bool {
	for i := 0; i < len(anchorBytes); i++ {
		if strings.IndexByte(text, anchorBytes[i]) >= 0 {
			return true
		}
	}
	return false
}

// nextNumberStart is the first position at or after i of a digit, '+' or
// '(' (len(text) if none), read eight bytes at a time.
func nextNumberStart(text string, i int) int {
	const lo, hi uint64 = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(text); i += 8 {
		b := text[i : i+8]
		x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		t := x &^ hi
		// Bit 7 of a byte: set where the byte is in '0'..'9' (t+0x50
		// reaches 0x80 from '0', t+0x46 from ':') or in '('..'+' (the
		// bytes whose x^'(' is 0 but for its two low bits).
		m := (t + 0x50*lo) &^ (t + 0x46*lo)
		y := (x ^ '('*lo) &^ (3 * lo)
		m |= ^((y&^hi + ^hi) | y)
		if m &= hi &^ x; m != 0 {
			i += bits.TrailingZeros64(m) / 8
			if c := text[i]; isDigit(c) || c == '+' || c == '(' {
				return i
			}
			i -= 7 // a ')' or '*': on from the byte after it
		}
	}
	for ; i < len(text); i++ {
		if c := text[i]; isDigit(c) || c == '+' || c == '(' {
			return i
		}
	}
	return i
}

// digitsAt is the number k of digits at text[i:] when they are followed
// by a byte that is neither a digit nor one that may go on a number
// (' ', '-', '.', '(', ')'), within eight bytes; else 0.
func digitsAt(text string, i int) int {
	const lo, hi uint64 = 0x0101010101010101, 0x8080808080808080
	if i+8 > len(text) {
		return 0
	}
	b := text[i : i+8]
	x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	t := x &^ hi
	d := (t + 0x50*lo) &^ (t + 0x46*lo) &^ x & hi // the digits
	k := bits.TrailingZeros64(^d&hi) / 8          // the first that is not
	if k == 0 || k == 8 {
		return 0
	}
	switch text[i+k] {
	case ' ', '-', '.', '(', ')':
		return 0
	}
	return k
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// cardSeparators accepts digits alone or grouped by single spaces or
// dashes.
func cardSeparators(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isDigit(c) && c != ' ' && c != '-' {
			return false
		}
	}
	return true
}

// luhn checks the digits of s with the Luhn algorithm.
func luhn(s string) bool {
	sum, double := 0, false
	for i := len(s) - 1; i >= 0; i-- {
		c := s[i]
		if !isDigit(c) {
			continue
		}
		d := int(c - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}
