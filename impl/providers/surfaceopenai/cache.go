package surfaceopenai

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// CacheKey is the prompt_cache_key of a session: OpenAI routes requests
// that share a key (and a prefix) to the machines that hold that prefix,
// so a session's requests keep hitting its cached prompt. It is a hash of
// the session's id: a key should carry no user data. Set it on every
// request of the session (SetCacheKey, SetChatCacheKey).
func CacheKey(sessionID string) string {
	sum := sha256.Sum256([]byte(sessionID))
	return "surface-" + hex.EncodeToString(sum[:12])
}

// SetCacheKey sets the Responses request's prompt_cache_key to the
// session's CacheKey.
func SetCacheKey(p *responses.ResponseNewParams, sessionID string) {
	p.PromptCacheKey = openai.String(CacheKey(sessionID))
}

// SetChatCacheKey sets the Chat Completions request's prompt_cache_key to
// the session's CacheKey.
func SetChatCacheKey(p *openai.ChatCompletionNewParams, sessionID string) {
	p.PromptCacheKey = openai.String(CacheKey(sessionID))
}
