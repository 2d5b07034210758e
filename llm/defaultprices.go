package llm

// DefaultPricesDate is the day the figures of [DefaultPrices] were taken
// from the providers' pricing pages (docs/models.md, "Usage and cost").
const DefaultPricesDate = "2026-12-02"

// DefaultPrices returns a copy of the built-in price table: the standard
// (not batch, flex or priority) prices of current OpenAI, Anthropic and
// Gemini models, as their pricing pages published them on
// [DefaultPricesDate]. Prices change: check them against the providers'
// pages, and give your own with agent.Config.Prices
// (DefaultPrices().With(...)).
//
// What the table does not model: OpenAI's long-context rates (prompts
// over 272K tokens on the GPT-5.4 and 5.5 families) and regional or data
// residency uplifts; Anthropic's 1-hour cache writes (CacheWrite is the
// 5-minute price); Gemini's audio input rates and context cache storage
// (billed by the hour, not by the token).
func DefaultPrices() Prices {
	out := make(Prices, len(defaultPrices))
	for k, v := range defaultPrices {
		if v.LongPrompt != nil {
			lp := *v.LongPrompt
			v.LongPrompt = &lp
		}
		out[k] = v
	}
	return out
}

// mtok is a price per million tokens given in microdollars, so that the
// table reads as the pricing pages do: mtok(75_000) is $0.075.
func mtok(micro int64) USD { return USD(micro) * Microdollar }

// price is a flat price: input, cache read, cache write and output.
func price(in, read, write, out int64) Price {
	return Price{Input: mtok(in), CacheRead: mtok(read), CacheWrite: mtok(write), Output: mtok(out), Date: DefaultPricesDate}
}

// long adds a long-prompt tier above tokens.
func long(p Price, tokens int, tier Price) Price {
	tier.Date = ""
	p.LongPromptTokens, p.LongPrompt = tokens, &tier
	return p
}

// defaultPrices: dollars per million tokens, written in microdollars
// (1_250_000 is $1.25). Sources, read on DefaultPricesDate:
// developers.openai.com/api/docs/pricing, platform.claude.com/docs/en/about-claude/pricing
// and the model pages under platform.claude.com/docs/en/models,
// ai.google.dev/gemini-api/docs/pricing.
var defaultPrices = Prices{
	// OpenAI: input, cached input, (no cache write charge), output.
	"openai/gpt-5.5":      price(5_000_000, 500_000, 0, 30_000_000),
	"openai/gpt-5.4":      price(2_500_000, 250_000, 0, 15_000_000),
	"openai/gpt-5.4-mini": price(750_000, 75_000, 0, 4_500_000),
	"openai/gpt-5.4-nano": price(200_000, 20_000, 0, 1_250_000),
	"openai/gpt-5.2":      price(1_750_000, 175_000, 0, 14_000_000),
	"openai/gpt-5.1":      price(1_250_000, 125_000, 0, 10_000_000),
	"openai/gpt-5":        price(1_250_000, 125_000, 0, 10_000_000),
	"openai/gpt-5-mini":   price(250_000, 25_000, 0, 2_000_000),
	"openai/gpt-5-nano":   price(50_000, 5_000, 0, 400_000),
	"openai/gpt-4.1":      price(2_000_000, 500_000, 0, 8_000_000),
	"openai/gpt-4.1-mini": price(400_000, 100_000, 0, 1_600_000),
	"openai/gpt-4.1-nano": price(100_000, 25_000, 0, 400_000),
	"openai/gpt-4o":       price(2_500_000, 1_250_000, 0, 10_000_000),
	"openai/gpt-4o-mini":  price(150_000, 75_000, 0, 600_000),
	"openai/o3":           price(2_000_000, 500_000, 0, 8_000_000),
	"openai/o4-mini":      price(1_100_000, 275_000, 0, 4_400_000),

	// Anthropic: base input, cache hits, 5-minute cache writes, output.
	"anthropic/claude-opus-5-5":   price(4_000_000, 200_000, 5_000_000, 20_000_000),
	"anthropic/claude-opus-5":     price(5_000_000, 500_000, 6_250_000, 25_000_000),
	"anthropic/claude-sonnet-5-5": price(2_000_000, 100_000, 2_500_000, 10_000_000),
	"anthropic/claude-sonnet-5":   price(2_000_000, 200_000, 2_500_000, 10_000_000),
	"anthropic/claude-haiku-5-5": long(price(100_000, 10_000, 125_000, 500_000),
		100_000, price(500_000, 50_000, 625_000, 2_500_000)),
	"anthropic/claude-opus-4-5": price(5_000_000, 500_000, 6_250_000, 25_000_000),
	"anthropic/claude-sonnet-4-5": long(price(3_000_000, 300_000, 3_750_000, 15_000_000),
		200_000, price(6_000_000, 600_000, 7_500_000, 22_500_000)),
	"anthropic/claude-haiku-4-5": price(1_000_000, 100_000, 1_250_000, 5_000_000),
	"anthropic/claude-opus-4-1":  price(15_000_000, 1_500_000, 18_750_000, 75_000_000),
	"anthropic/claude-sonnet-4": long(price(3_000_000, 300_000, 3_750_000, 15_000_000),
		200_000, price(6_000_000, 600_000, 7_500_000, 22_500_000)),

	// Gemini (paid tier): input, context cache read, (no write charge),
	// output (thinking included).
	"gemini/gemini-3-pro-preview": long(price(2_000_000, 200_000, 0, 12_000_000),
		200_000, price(4_000_000, 400_000, 0, 18_000_000)),
	"gemini/gemini-2.5-pro": long(price(1_250_000, 125_000, 0, 10_000_000),
		200_000, price(2_500_000, 250_000, 0, 15_000_000)),
	"gemini/gemini-2.5-flash":      price(300_000, 30_000, 0, 2_500_000),
	"gemini/gemini-2.5-flash-lite": price(100_000, 10_000, 0, 400_000),
}
