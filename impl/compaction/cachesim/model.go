package cachesim

import "time"

// Model is a provider's prompt cache as its documentation describes it.
type Model struct {
	Name string
	// Read and Write are the prices of a cached input token read from and
	// written to the cache, relative to an uncached one.
	Read, Write float64
	// MinTokens is the shortest prefix the provider caches.
	MinTokens int
	// Step: hits come in increments of Step tokens above MinTokens (0: any
	// length).
	Step int
	// TTL is how long an entry lives after its last use.
	TTL time.Duration
	// Explicit: only prefixes that end at a cache_control breakpoint of a
	// request are written, and a request reads an entry ending at most
	// Lookback blocks before one of its breakpoints (Anthropic). Otherwise
	// every prefix of every request is cached (OpenAI, Gemini).
	Explicit    bool
	Lookback    int
	Breakpoints int // the most breakpoints a request may set
}

// Anthropic is Claude's prompt cache (docs.anthropic.com, "Prompt
// caching", platform.claude.com/docs/en/build-with-claude/prompt-caching):
// explicit cache_control breakpoints, at most 4 per request; a 5-minute
// cache write costs 1.25x the base input price and a read 0.1x; an entry
// lives 5 minutes after its last use; prefixes shorter than 1,024 tokens
// (Opus, Sonnet) are not cached; a breakpoint finds an entry up to 20
// blocks before it.
var Anthropic = Model{Name: "anthropic", Read: 0.1, Write: 1.25, MinTokens: 1024, TTL: 5 * time.Minute, Explicit: true, Lookback: 20, Breakpoints: 4}

// OpenAI is OpenAI's automatic prompt caching
// (developers.openai.com/api/docs/guides/prompt-caching): prompts of 1,024
// tokens or more, hits in 128-token increments, no write fee, cached input
// up to 90% off (0.1x, the GPT-5 family); caches are cleared within 5 to
// 10 minutes of inactivity (5 here: the pessimistic end).
var OpenAI = Model{Name: "openai", Read: 0.1, Write: 1, MinTokens: 1024, Step: 128, TTL: 5 * time.Minute}

// Gemini is the Gemini API's implicit caching
// (ai.google.dev/gemini-api/docs/caching): on by default for Gemini 2.5
// and newer, a minimum of 4,096 input tokens for the Gemini 3 models, no
// write fee, cached tokens billed at the context-caching price (0.1x of
// input on the Gemini 3 price list). The docs give no lifetime; 5 minutes
// is assumed.
var Gemini = Model{Name: "gemini", Read: 0.1, Write: 1, MinTokens: 4096, TTL: 5 * time.Minute}

// Models are the three providers, in report order.
var Models = []Model{Anthropic, OpenAI, Gemini}
