package convo

import (
	"regexp"
	"strings"
)

// Provider names, as the adapters record them in provenance and in native
// items.
const (
	Anthropic = "anthropic"
	OpenAI    = "openai"
	Google    = "google"
	DeepSeek  = "deepseek"
)

// Target is who a request goes to (PROV-2): the adapter's provider and,
// when the harness names it, the model.
type Target struct {
	Provider string
	// Model is the model asked; "" replays every item of Provider,
	// whatever model issued it.
	Model string
	// SameFamily decides whether an opaque item issued by one model may go
	// to another (nil: Family of both is equal).
	SameFamily func(issued, asked string) bool
	// Cache asks for the prompt-cache marks a provider takes explicitly
	// (Anthropic's cache_control breakpoints): after the message holding
	// surface node CacheStable (the end of the head that never changes;
	// -1: none) and after the last message.
	Cache       bool
	CacheStable int64
}

// Replays reports whether the native item n goes to t as it came: it was
// issued by t's provider, and, when it is opaque (a signature, encrypted
// content, a compaction: bound to the model that made it) and t names a
// model, by a model of the same family. Anything else gets the block's
// portable part, or nothing.
func (t Target) Replays(n *Native) bool {
	if n == nil || n.Provider != t.Provider {
		return false
	}
	if !n.Opaque || t.Model == "" || n.Model == "" {
		return true
	}
	if t.SameFamily != nil {
		return t.SameFamily(n.Model, t.Model)
	}
	return Family(n.Model) == Family(t.Model)
}

var snapshot = regexp.MustCompile(`(?:[-@](?:\d{8}|\d{4}-\d{2}-\d{2}|latest|preview(?:-[\w.-]*)?|exp(?:-[\w.-]*)?|\d{3}))+$`)

// Family is a model's name without its snapshot suffix (a date, "latest",
// "preview…", "exp…", a three-digit revision), lowercased:
// "claude-opus-4-5-20251101" and "claude-opus-4-5" are one family,
// "gpt-5.1" and "gpt-5.1-2025-11-13" another, "gemini-3-pro-preview" and
// "gemini-3-pro" a third.
func Family(model string) string {
	m := strings.ToLower(strings.TrimPrefix(model, "models/"))
	return snapshot.ReplaceAllString(m, "")
}
