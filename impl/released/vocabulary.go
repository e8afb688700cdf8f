package released

import "github.com/surfacelog/surface/impl/event"

// KnownTypes are the 48 event types the released reader knows (0.1.0-rc.8;
// the releases from 0.0.1-rc.2 to 0.1.0-rc.7 know the same less the four
// team/* types). Any other type is refused unless marked ignorable (REL-2).
var KnownTypes = []event.Type{
	"agent-preset/selected", "agent/inbox/spliced", "approval/asked", "approval/decided", "approval/policy",
	"assistant/chunk", "assistant/message", "command/done", "command/run", "compaction/end", "compaction/prune",
	"compaction/start", "compaction/summary", "feedback/record", "goal/change", "hook/invoked", "hook/result",
	"llm/retry", "llm/retry-started", "permission/preset", "plan/mode", "request/context", "request/header",
	"sandbox/mode", "schedule/change", "session/end-seed", "session/title", "session/title-llm-request",
	"step/end", "step/start", "subagent/descriptor", "team/member", "team/message/delivered",
	"team/message/queued", "team/task", "todo/write", "tool-workflow/agent-end", "tool-workflow/agent-start",
	"tool-workflow/run-end", "tool-workflow/run-start", "tool/call", "tool/code-dispatch",
	"tool/code-dispatch-start", "tool/result", "turn/end", "turn/start", "user/message",
	"web/deepseek-search-llm-request",
}

// TypeEndSeed is the log-only event the released system appends whenever
// it builds a session from a seed (loading a file among them).
const TypeEndSeed event.Type = "session/end-seed"

var known = func() map[event.Type]bool {
	m := make(map[event.Type]bool, len(KnownTypes))
	for _, t := range KnownTypes {
		m[t] = true
	}
	return m
}()

// Known reports whether t is one of the 48 known released types.
func Known(t event.Type) bool { return known[t] }

// IsSurface reports whether t is surface-eligible in the released
// vocabulary: user/message, assistant/message and tool/result only.
func IsSurface(t event.Type) bool {
	return t == event.TypeUserMessage || t == event.TypeAssistantMessage || t == event.TypeToolResult
}

// refused are the types the released reader refuses with their own
// message, ignorable or not (REL-2).
var refused = map[event.Type]string{
	"request/header-delta": "request/header-delta is a retired type the released reader refuses",
	"mode/set":             "mode/set is a retired type the released reader refuses",
}
