package llm

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// USD is an exact amount of US dollars, counted in picodollars (10⁻¹²
// USD). Every published token price (dollars per million tokens, with at
// most six decimals) times a whole number of tokens is a whole number of
// picodollars, so costs add up exactly: no float rounding. An int64 holds
// amounts up to about 9.2 million dollars.
type USD int64

// Units of [USD].
const (
	Picodollar  USD = 1
	Microdollar USD = 1_000_000
	Cent        USD = 10_000_000_000
	Dollar      USD = 1_000_000_000_000
)

// Dollars returns f dollars, rounded to the nearest picodollar (exact for
// any price written with up to twelve decimals); NaN is 0 and amounts past
// the range saturate.
func Dollars(f float64) USD {
	v := math.Round(f * float64(Dollar))
	switch {
	case math.IsNaN(v):
		return 0
	case v >= math.MaxInt64:
		return math.MaxInt64
	case v <= math.MinInt64:
		return math.MinInt64
	}
	return USD(v)
}

// ParseUSD reads an amount of dollars written as a decimal ("0.075",
// "$3", "-1.5"), exactly; more than twelve decimals is an error.
func ParseUSD(s string) (USD, error) {
	t := strings.TrimSpace(s)
	neg := strings.HasPrefix(t, "-")
	t = strings.TrimPrefix(strings.TrimPrefix(t, "-"), "$")
	whole, frac, _ := strings.Cut(t, ".")
	if whole == "" && frac == "" || len(frac) > 12 || strings.ContainsAny(whole+frac, "+-_ ") {
		return 0, fmt.Errorf("llm: %q is not an amount of dollars (digits, at most 12 decimals)", s)
	}
	var w, f uint64
	var err error
	if whole != "" {
		if w, err = strconv.ParseUint(whole, 10, 64); err != nil {
			return 0, fmt.Errorf("llm: %q is not an amount of dollars: %w", s, err)
		}
	}
	if frac != "" {
		if f, err = strconv.ParseUint(frac+strings.Repeat("0", 12-len(frac)), 10, 64); err != nil {
			return 0, fmt.Errorf("llm: %q is not an amount of dollars: %w", s, err)
		}
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++ // -9223372.036854775808 is the least
	}
	if w > limit/uint64(Dollar) || w*uint64(Dollar) > limit-f {
		return 0, fmt.Errorf("llm: %q is out of range (about 9.2 million dollars at most)", s)
	}
	u := w*uint64(Dollar) + f
	if neg {
		return USD(-u), nil // two's complement: -(MaxInt64+1) is MinInt64
	}
	return USD(u), nil
}

// Float64 is d in dollars, as a float (for display and metrics; sums
// should add USD values).
func (d USD) Float64() float64 { return float64(d) / float64(Dollar) }

// String writes d in dollars with as many decimals as it needs, at least
// two: "$3.00", "$0.000125", "-$0.50".
func (d USD) String() string {
	s := d.decimal()
	if s[0] == '-' {
		return "-$" + s[1:]
	}
	return "$" + s
}

// decimal writes |d| in dollars (with a leading '-' when negative) without
// the dollar sign.
func (d USD) decimal() string {
	sign := ""
	u := uint64(d)
	if d < 0 {
		sign, u = "-", uint64(-d) // MinInt64 negates to itself; as uint64 it is right
	}
	whole, frac := u/uint64(Dollar), u%uint64(Dollar)
	fs := strings.TrimRight(fmt.Sprintf("%012d", frac), "0")
	for len(fs) < 2 {
		fs += "0"
	}
	return sign + strconv.FormatUint(whole, 10) + "." + fs
}

// MarshalJSON writes d as a JSON number of dollars, exactly (0.000125).
func (d USD) MarshalJSON() ([]byte, error) { return []byte(d.decimal()), nil }

// UnmarshalJSON reads a JSON number (or string) of dollars, exactly.
func (d *USD) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil // as encoding/json leaves a number it meets null for
	}
	s := strings.Trim(string(b), `"`)
	if strings.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("llm: %s is not an amount of dollars", b)
		}
		*d = Dollars(f)
		return nil
	}
	v, err := ParseUSD(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Price is what one model charges, in dollars per million tokens of each
// class of [Usage]. A class without a price of its own is billed like the
// tokens it is part of: CacheRead and CacheWrite at Input, Reasoning at
// Output (so a missing cache price never makes a turn cheaper than it was).
type Price struct {
	// Input is the price of input tokens neither read from nor written to
	// the prompt cache.
	Input USD `json:"input"`
	// Output is the price of output tokens (reasoning included, unless
	// Reasoning is set).
	Output USD `json:"output"`
	// CacheRead is the price of input tokens read from the prompt cache
	// (OpenAI's cached input, Anthropic's cache hits, Gemini's context
	// caching).
	CacheRead USD `json:"cache_read,omitempty"`
	// CacheWrite is the price of input tokens written to the prompt cache
	// (Anthropic's 5-minute cache writes; OpenAI and Gemini charge none).
	CacheWrite USD `json:"cache_write,omitempty"`
	// Reasoning is the price of reasoning tokens, for a provider that bills
	// them apart from the rest of the output (0: at Output).
	Reasoning USD `json:"reasoning,omitempty"`
	// LongPromptTokens and LongPrompt price a turn whose prompt (every
	// input token, cached or not) is longer than LongPromptTokens: all of
	// its tokens are billed at *LongPrompt (Gemini 2.5 Pro above 200,000
	// tokens, for one). Both or neither are set.
	LongPromptTokens int    `json:"long_prompt_tokens,omitempty"`
	LongPrompt       *Price `json:"long_prompt,omitempty"`
	// Date is the day the figures were taken from the provider (YYYY-MM-DD;
	// informational).
	Date string `json:"date,omitempty"`
}

// Validate reports a price that cannot be used: a negative figure, or a
// long-prompt tier without its threshold (or the other way round).
func (p Price) Validate() error {
	for _, f := range []struct {
		name string
		v    USD
	}{{"Input", p.Input}, {"Output", p.Output}, {"CacheRead", p.CacheRead}, {"CacheWrite", p.CacheWrite}, {"Reasoning", p.Reasoning}} {
		if f.v < 0 {
			return fmt.Errorf("llm: Price.%s is negative (%s)", f.name, f.v)
		}
	}
	if (p.LongPromptTokens > 0) != (p.LongPrompt != nil) || p.LongPromptTokens < 0 {
		return errors.New("llm: Price.LongPromptTokens and Price.LongPrompt go together")
	}
	if p.LongPrompt != nil {
		if p.LongPrompt.LongPrompt != nil {
			return errors.New("llm: Price.LongPrompt has a long-prompt tier of its own")
		}
		return p.LongPrompt.Validate()
	}
	return nil
}

// Cost is what usage u costs at this price, exactly (rounded to the
// nearest picodollar, which only a price with more than six decimals
// needs). Token counts below zero count as zero, and a class's tokens
// beyond what they are part of (cache reads beyond the input, reasoning
// beyond the output) are capped at it.
func (p Price) Cost(u Usage) USD {
	if p.LongPrompt != nil && u.InputTokens > p.LongPromptTokens {
		return p.LongPrompt.Cost(u)
	}
	in, out := nonNeg(u.InputTokens), nonNeg(u.OutputTokens)
	read := min(nonNeg(u.CacheReadTokens), in)
	write := min(nonNeg(u.CacheWriteTokens), in-read)
	reason := min(nonNeg(u.ReasoningTokens), out)
	var acc wide
	acc.add(in-read-write, p.Input)
	acc.add(read, or(p.CacheRead, p.Input))
	acc.add(write, or(p.CacheWrite, p.Input))
	acc.add(out-reason, p.Output)
	acc.add(reason, or(p.Reasoning, p.Output))
	return acc.perMillion()
}

// wide is a non-negative 128-bit sum of tokens × price per million.
type wide struct{ hi, lo uint64 }

func (w *wide) add(tokens int, price USD) {
	if tokens <= 0 || price <= 0 {
		return
	}
	hi, lo := bits.Mul64(uint64(tokens), uint64(price))
	var c uint64
	w.lo, c = bits.Add64(w.lo, lo, 0)
	w.hi, _ = bits.Add64(w.hi, hi, c)
}

// perMillion is the sum divided by a million, rounded half up, saturating
// at the largest USD.
func (w wide) perMillion() USD {
	const m = 1_000_000
	if w.hi >= m {
		return math.MaxInt64
	}
	q, r := bits.Div64(w.hi, w.lo, m)
	if r >= m/2 {
		q++
	}
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return USD(q)
}

func nonNeg(n int) int { return max(n, 0) }

func or(v, fallback USD) USD {
	if v == 0 {
		return fallback
	}
	return v
}

// Cost is what a run's (or a turn's) model usage cost, as far as it is
// known: USD sums the turns that had a price, and Unpriced counts those
// that had none, whose cost is unknown. Cost is known only when Unpriced
// is zero; an unknown cost is never shown or compared as zero.
type Cost struct {
	// USD is the cost of the priced turns.
	USD USD `json:"usd"`
	// Unpriced counts the model turns whose model had no price.
	Unpriced int `json:"unpriced,omitempty"`
}

// Known reports whether every turn was priced, so that USD is the whole
// cost.
func (c Cost) Known() bool { return c.Unpriced == 0 }

// Add returns the sum of c and d.
func (c Cost) Add(d Cost) Cost {
	s := c.USD + d.USD
	if (d.USD > 0 && s < c.USD) || (d.USD < 0 && s > c.USD) {
		s = math.MaxInt64
	}
	return Cost{USD: s, Unpriced: c.Unpriced + d.Unpriced}
}

// String is "$0.0123" for a known cost, "cost unknown" when no turn was
// priced, and "at least $0.0123 (2 turns unpriced)" when some were.
func (c Cost) String() string {
	switch {
	case c.Known():
		return c.USD.String()
	case c.USD == 0:
		return "cost unknown"
	}
	turns := "turns"
	if c.Unpriced == 1 {
		turns = "turn"
	}
	return fmt.Sprintf("at least %s (%d %s unpriced)", c.USD, c.Unpriced, turns)
}

// Prices is a price table: [Price] by model name. A name is
// "provider/model" as [Model.Name] reports it ("openai/gpt-4o-mini",
// "anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-flash"), or a bare
// model name, which matches that model from any provider.
type Prices map[string]Price

// Validate reports the first unusable price of the table, naming its
// model.
func (t Prices) Validate() error {
	for name, p := range t {
		if strings.TrimSpace(name) == "" {
			return errors.New("llm: a price has an empty model name")
		}
		if err := p.Validate(); err != nil {
			return fmt.Errorf("price of %q: %w", name, err)
		}
	}
	return nil
}

// With returns a copy of t with the prices of more added, replacing any of
// t's under the same name (DefaultPrices().With(mine) keeps the defaults
// for every other model).
func (t Prices) With(more Prices) Prices {
	out := make(Prices, len(t)+len(more))
	for k, v := range t {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// Lookup finds the price of model, named as [Model.Name] reports it or as
// a provider reports the model that answered ([Response.Model]): exactly;
// then without a date or version suffix ("gpt-4o-mini-2024-07-18",
// "claude-sonnet-4-5-20250929", "...@20250929") or a "models/" prefix; then
// by the bare model name under any provider, when just one entry has it.
// It reports false for a model with no price: its cost is unknown, not
// zero.
func (t Prices) Lookup(model string) (Price, bool) {
	if len(t) == 0 {
		return Price{}, false
	}
	name := strings.TrimSpace(model)
	provider, bare := "", name
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		provider, bare = name[:i], name[i+1:]
		if provider == "models" || strings.HasSuffix(provider, "/models") {
			provider = strings.TrimSuffix(strings.TrimSuffix(provider, "models"), "/")
		}
	}
	for _, b := range []string{bare, undated(bare)} {
		if provider != "" {
			if p, ok := t[provider+"/"+b]; ok {
				return p, true
			}
		}
		if p, ok := t[b]; ok {
			return p, true
		}
	}
	// The bare name under another provider (Gemini's models through an
	// OpenAI-compatible endpoint are billed as Gemini's), when unique.
	for _, b := range []string{bare, undated(bare)} {
		var found Price
		n := 0
		for k, p := range t {
			if i := strings.LastIndexByte(k, '/'); i >= 0 && k[i+1:] == b {
				found, n = p, n+1
			}
		}
		if n == 1 {
			return found, true
		}
	}
	return Price{}, false
}

// undated strips a snapshot suffix from a model name: "-2024-07-18",
// "-20250929", "@20250929", "-v1:0" (Bedrock), "-001" (Gemini's versions),
// "-latest".
func undated(name string) string {
	if i := strings.IndexByte(name, '@'); i > 0 {
		name = name[:i]
	}
	if i := strings.Index(name, "-v"); i > 0 && strings.Contains(name[i:], ":") {
		name = name[:i]
	}
	name = strings.TrimSuffix(name, "-latest")
	// -YYYY-MM-DD
	if n := len(name); n > 11 && name[n-11] == '-' && name[n-6] == '-' && name[n-3] == '-' &&
		digits(name[n-10:n-6]) && digits(name[n-5:n-3]) && digits(name[n-2:]) {
		return name[:n-11]
	}
	// -YYYYMMDD or -NNN
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if s := name[i+1:]; (len(s) == 8 || len(s) == 3) && digits(s) {
			return name[:i]
		}
	}
	return name
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
