package llm

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestPriceCost(t *testing.T) {
	// $3 input, $0.30 cache read, $3.75 cache write, $15 output per MTok.
	sonnet := Price{Input: 3 * Dollar, CacheRead: 30 * Cent, CacheWrite: Dollars(3.75), Output: 15 * Dollar}
	for _, tc := range []struct {
		name  string
		price Price
		usage Usage
		want  USD
	}{
		// 1,000 × $3/M = $0.003; 500 × $15/M = $0.0075.
		{"input and output", sonnet, Usage{InputTokens: 1000, OutputTokens: 500}, Dollars(0.0105)},
		// Uncached 1,000 − 600 − 200 = 200 × $3 = $0.0006; 600 × $0.30 = $0.00018;
		// 200 × $3.75 = $0.00075; 100 × $15 = $0.0015 → $0.00303.
		{"cache classes", sonnet, Usage{InputTokens: 1000, CacheReadTokens: 600, CacheWriteTokens: 200, OutputTokens: 100}, Dollars(0.00303)},
		// Reasoning is output without a price of its own: 300 × $15 = $0.0045.
		{"reasoning at output", sonnet, Usage{OutputTokens: 300, ReasoningTokens: 200}, Dollars(0.0045)},
		// With one: 100 × $15 + 200 × $20 = $0.0015 + $0.004.
		{"reasoning priced", Price{Output: 15 * Dollar, Reasoning: 20 * Dollar}, Usage{OutputTokens: 300, ReasoningTokens: 200}, Dollars(0.0055)},
		// No cache prices: cache tokens at Input (1,000 × $0.15 = $0.00015).
		{"cache at input", Price{Input: 15 * Cent}, Usage{InputTokens: 1000, CacheReadTokens: 400, CacheWriteTokens: 100}, Dollars(0.00015)},
		// gpt-4o-mini's $0.075 cached input: 1 token is 75,000 picodollars.
		{"one cached token", Price{Input: 15 * Cent, CacheRead: Dollars(0.075)}, Usage{InputTokens: 1, CacheReadTokens: 1}, 75_000},
		// A seventh decimal rounds half up: 1 token × $0.0000005/M = 0.5 pico.
		{"rounding", Price{Input: Dollars(0.0000005)}, Usage{InputTokens: 1}, 1},
		{"counts capped", sonnet, Usage{InputTokens: 10, CacheReadTokens: 50, OutputTokens: 10, ReasoningTokens: 99}, Dollars(0.000003 + 0.00015)},
		{"negative counts", sonnet, Usage{InputTokens: -5, OutputTokens: -1}, 0},
		{"zero", sonnet, Usage{}, 0},
		// 300,000 > 200,000: all at the long tier, 300,000 × $2.50 = $0.75.
		{"long prompt", Price{Input: Dollars(1.25), LongPromptTokens: 200_000, LongPrompt: &Price{Input: Dollars(2.5)}}, Usage{InputTokens: 300_000}, 75 * Cent},
		{"at the threshold", Price{Input: Dollars(1.25), LongPromptTokens: 200_000, LongPrompt: &Price{Input: Dollars(2.5)}}, Usage{InputTokens: 200_000}, 25 * Cent},
		// A billion tokens at $150/M does not overflow: $150,000.
		{"large", Price{Output: 150 * Dollar}, Usage{OutputTokens: 1_000_000_000}, 150_000 * Dollar},
		{"saturates", Price{Output: math.MaxInt64}, Usage{OutputTokens: math.MaxInt32}, math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.price.Cost(tc.usage); got != tc.want {
				t.Fatalf("Cost = %s (%d), want %s (%d)", got, int64(got), tc.want, int64(tc.want))
			}
		})
	}
}

func TestUSDText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want USD
		str  string
	}{
		{"3", 3 * Dollar, "$3.00"},
		{"$0.075", 75 * Cent / 10, "$0.075"},
		{"0.000000000001", 1, "$0.000000000001"},
		{"-1.5", -150 * Cent, "-$1.50"},
		{".5", 50 * Cent, "$0.50"},
		{"1250.125", Dollars(1250.125), "$1250.125"},
	} {
		got, err := ParseUSD(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseUSD(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
		if s := tc.want.String(); s != tc.str {
			t.Errorf("String(%d) = %q, want %q", tc.want, s, tc.str)
		}
		b, _ := json.Marshal(tc.want)
		var back USD
		if err := json.Unmarshal(b, &back); err != nil || back != tc.want {
			t.Errorf("JSON %s reads back as %d, %v", b, back, err)
		}
	}
	if v, err := ParseUSD("-9223372.036854775808"); err != nil || v != math.MinInt64 {
		t.Errorf("the least amount reads as %d, %v", v, err)
	}
	if v, err := ParseUSD("9223372.036854775807"); err != nil || v != math.MaxInt64 {
		t.Errorf("the largest amount reads as %d, %v", v, err)
	}
	for _, bad := range []string{"", ".", "1.0000000000001", "abc", "1e3", "--1", "+1", "99999999999", "9223372.036854775808", "-9223372.036854775809"} {
		if _, err := ParseUSD(bad); err == nil {
			t.Errorf("ParseUSD(%q) accepted", bad)
		}
	}
}

func TestCost(t *testing.T) {
	for _, tc := range []struct {
		c     Cost
		known bool
		str   string
	}{
		{Cost{USD: Dollars(0.0123)}, true, "$0.0123"},
		{Cost{}, true, "$0.00"},
		{Cost{Unpriced: 2}, false, "cost unknown"},
		{Cost{USD: Dollars(0.01), Unpriced: 1}, false, "at least $0.01 (1 turn unpriced)"},
		{Cost{USD: 1}.Add(Cost{USD: 2, Unpriced: 3}), false, "at least $0.000000000003 (3 turns unpriced)"},
	} {
		if tc.c.Known() != tc.known || tc.c.String() != tc.str {
			t.Errorf("%+v: Known %v String %q; want %v %q", tc.c, tc.c.Known(), tc.c.String(), tc.known, tc.str)
		}
	}
	if s := (Cost{USD: math.MaxInt64}).Add(Cost{USD: 1}); s.USD != math.MaxInt64 {
		t.Errorf("a sum past the range is %d, want it saturated", s.USD)
	}
}

func TestPricesLookup(t *testing.T) {
	mine := Price{Input: 1 * Dollar}
	table := DefaultPrices().With(Prices{"acme/house-model": mine, "gpt-4o-mini": mine})
	for _, tc := range []struct {
		name string
		want string // the key whose price is found ("" none)
	}{
		{"openai/gpt-4o", "openai/gpt-4o"},
		{"anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"},
		{"gemini/gemini-2.5-flash", "gemini/gemini-2.5-flash"},
		// As providers report the model that answered.
		{"openai/gpt-4o-2024-08-06", "openai/gpt-4o"},
		{"anthropic/claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4-5"},
		{"claude-haiku-4-5@20251001", "anthropic/claude-haiku-4-5"},
		{"gemini/models/gemini-2.5-pro", "gemini/gemini-2.5-pro"},
		{"gemini-2.5-flash-001", "gemini/gemini-2.5-flash"},
		// Gemini through the OpenAI-compatible endpoint.
		{"openai/gemini-2.5-flash", "gemini/gemini-2.5-flash"},
		// A bare key of the user's matches under any provider, before the
		// default's qualified one.
		{"openai/gpt-4o-mini", "openai/gpt-4o-mini"},
		{"gpt-4o-mini", "gpt-4o-mini"},
		{"acme/house-model", "acme/house-model"},
		{"house-model", "acme/house-model"},
		{"scripted (offline, deterministic; not a real model)", ""},
		{"openai/gpt-9", ""},
		{"", ""},
	} {
		got, ok := table.Lookup(tc.name)
		want, wantOK := table[tc.want]
		if ok != wantOK || (ok && !samePrice(got, want)) {
			t.Errorf("Lookup(%q) = %+v, %v; want %q's %+v", tc.name, got, ok, tc.want, want)
		}
	}
	if _, ok := Prices(nil).Lookup("openai/gpt-4o"); ok {
		t.Error("an empty table priced a model")
	}
}

func samePrice(a, b Price) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func TestDefaultPrices(t *testing.T) {
	d := DefaultPrices()
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, p := range d {
		if p.Input <= 0 || p.Output <= p.Input || p.CacheRead <= 0 || p.CacheRead >= p.Input || p.Date != DefaultPricesDate {
			t.Errorf("%s: implausible price %+v", name, p)
		}
	}
	// Hand-checked against the pricing pages: gpt-4o-mini $0.15/$0.60 with
	// $0.075 cached input; 10,000 in (4,000 cached) and 1,000 out is
	// 6,000 × 0.15 + 4,000 × 0.075 + 1,000 × 0.60 = $0.0018 per million.
	p, _ := d.Lookup("openai/gpt-4o-mini")
	if got := p.Cost(Usage{InputTokens: 10_000, CacheReadTokens: 4_000, OutputTokens: 1_000}); got != Dollars(0.0018) {
		t.Errorf("gpt-4o-mini cost %s, want $0.0018", got)
	}
	// The copy is the caller's.
	lp := d["gemini/gemini-2.5-pro"].LongPrompt
	lp.Input = 0
	if DefaultPrices()["gemini/gemini-2.5-pro"].LongPrompt.Input == 0 {
		t.Error("changing a copy changed the default table")
	}
}

func TestPriceValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Price
		ok   bool
	}{
		{"flat", Price{Input: 1, Output: 2}, true},
		{"negative", Price{Input: -1}, false},
		{"threshold without tier", Price{LongPromptTokens: 10}, false},
		{"tier without threshold", Price{LongPrompt: &Price{}}, false},
		{"nested tier", Price{LongPromptTokens: 1, LongPrompt: &Price{LongPromptTokens: 1, LongPrompt: &Price{}}}, false},
		{"bad tier", Price{LongPromptTokens: 1, LongPrompt: &Price{Output: -1}}, false},
	} {
		if err := tc.p.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate = %v", tc.name, err)
		}
	}
	if err := (Prices{" ": {}}).Validate(); err == nil {
		t.Error("an empty model name was accepted")
	}
}

func FuzzParseUSD(f *testing.F) {
	for _, s := range []string{"0.075", "$3", "-1.5", "1e3", "", "9223372.036854775807", `"0.5"`, "-9223372.036854775808", "1e300"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var j USD
		if err := j.UnmarshalJSON([]byte(s)); err == nil {
			if b, err := j.MarshalJSON(); err != nil || !json.Valid(b) {
				t.Fatalf("%q reads as %d, which writes as invalid JSON %q", s, j, b)
			}
		}
		v, err := ParseUSD(s)
		if err != nil {
			return
		}
		if (v < 0) != strings.Contains(s, "-") && v != 0 {
			t.Fatalf("%q reads as %d: the wrong sign", s, v)
		}
		back, err := ParseUSD(v.decimal())
		if err != nil || back != v {
			t.Fatalf("%q → %d → %q → %d, %v", s, v, v.decimal(), back, err)
		}
	})
}
