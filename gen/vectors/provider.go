package main

import (
	"strconv"
	"strings"

	"github.com/surfacelog/surface/conformance"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/internal/ops"
)

// --- provider items (PROV-*) ---

// Blocks as the adapters write them: a reasoning block with Anthropic's
// thinking kept whole (opaque: its signature), a function call with
// OpenAI's item (not opaque), a redacted thinking block, and a provider's
// compaction with its readable summary.
var (
	signature   = strings.Repeat("EqQBCkgIARABGAIiQL", 20)
	thinking    = `{"type":"reasoning","text":"check a.go first","native":{"provider":"anthropic","model":"claude-opus-4-5","opaque":true,"item":{"type":"thinking","thinking":"check a.go first","signature":"` + signature + `"}}}`
	fnCall      = `{"type":"tool-call","id":"call_1","name":"read","arguments":"{\"path\":\"a.go\"}","native":{"provider":"openai","model":"gpt-5.1","item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":"{\"path\":\"a.go\"}","status":"completed"}}}`
	redacted    = `{"type":"provider-item","native":{"provider":"anthropic","model":"claude-opus-4-5","opaque":true,"item":{"type":"redacted_thinking","data":"` + strings.Repeat("RW5jcnlwdGVk", 40) + `"}}}`
	provCompact = `{"type":"provider-item","text":"The user asked for a.go; it was read.","compaction":true,"native":{"provider":"anthropic","model":"claude-opus-4-5","opaque":true,"item":{"type":"compaction","content":"The user asked for a.go; it was read.","encrypted_content":"` + strings.Repeat("Q29tcGFjdGVk", 30) + `"}}}`
	provenance  = `,"provenance":{"provider":"anthropic","model":"claude-opus-4-5"}`
)

func providerVectors() []conformance.Vector {
	with := func(parts ...[]conformance.Step) []conformance.Step {
		var out []conformance.Step
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	steps := func(s ...conformance.Step) []conformance.Step { return s }
	long := strings.Repeat("The file defines the parser, its tests and a fuzz target; ", 12)
	asst := func(step int, blocks ...string) ops.Step {
		return ap(event.TypeAssistantMessage, `{"turn":1,"step":`+strconv.Itoa(step)+`,"content":[`+strings.Join(blocks, ",")+`]`+provenance+`}`, app())
	}
	text := func(t string) string { return `{"type":"text","text":"` + t + `"}` }
	prompt := ap(event.TypeUserMessage, `{"content":[`+text(long)+`],"source":{"kind":"user"}}`, app())
	// turn 1: prompt (1), a thinking reply with a call (2), its tool/call (3), the result (4), an answer (5)
	toolLoop := conformance.FromOps([]ops.Step{
		ap(event.TypeTurnStart, turnStart, nil), prompt,
		asst(1, thinking, `{"type":"tool-call","id":"toolu_1","name":"read","arguments":"{}"}`),
		ap(event.TypeToolCall, `{"turn":1,"step":1,"callId":"toolu_1","name":"read","arguments":"{}"}`, nil),
		ap(event.TypeToolResult, `{"turn":1,"step":1,"callId":"toolu_1","content":[`+text(long)+`],"isError":false}`, app(3)),
		asst(2, text(long)),
	})
	cases := []struct {
		name, desc string
		steps      []conformance.Step
		rules      []string
	}{
		{"items.kept", "PROV-1, PROV-6: an assistant message holding providers' items (thinking with its signature, a function call with its item, redacted thinking) and a response record is stored byte for byte; its message keeps every block whole, native included, and leaves the response out", with(conformance.FromOps([]ops.Step{
			ap(event.TypeTurnStart, turnStart, nil), prompt,
			ap(event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[`+thinking+`,`+redacted+`,`+fnCall+`]`+provenance+`,"response":{"id":"msg_1","iterations":[{"type":"message","input_tokens":10}]}}`, app()),
		})), []string{"PROV-1", "PROV-6"}},
		{"opaque.refused", "PROV-4: a compaction whose range holds an opaque item (a signature) is refused unless the summariser handles them; a non-opaque item (a function call's) is no obstacle; a selection stops before the first opaque node, or folds it when asked", with(toolLoop, steps(begin(1, 5), begin(1, 1), abort("only the prompt"), keepLast(0), conformance.Step{Op: "compact_select", KeepLast: new(int), Opaque: true}, begin(1, 5, "opaque"), framed("a.go was read")), conformance.FromOps([]ops.Step{
			asst(3, fnCall), ap(event.TypeToolCall, `{"turn":1,"step":3,"callId":"call_1","name":"read","arguments":"{\"path\":\"a.go\"}"}`, nil),
			ap(event.TypeToolResult, `{"turn":1,"step":3,"callId":"call_1","content":[`+text(long)+`],"isError":false}`, app(13)),
		}), steps(begin(12, 14), abort("a function call's item is not opaque"))), []string{"PROV-4"}},
		{"meter", "PROV-7: the meter prices a provider item by its text: a redacted thinking block costs 4, a provider compaction its summary's text; the signature of a thinking block is not priced", with(conformance.FromOps([]ops.Step{
			ap(event.TypeTurnStart, turnStart, nil), prompt,
			asst(1, thinking, redacted, text(long)),
		}), steps(begin(1, 2, "opaque"), framed("a.go was asked for and read"))), []string{"PROV-7", "COMP-11"}},
		{"compacted", "PROV-3, PROV-4: a provider's compaction replaces the surface before it; a library compaction must start after it (compaction.provider_compacted), and a selection starts there", with(toolLoop, conformance.FromOps([]ops.Step{
			ap(event.TypeAssistantMessage, `{"turn":1,"step":3,"content":[`+provCompact+`,`+text("Done.")+`]`+provenance+`}`, rep(1, 5, 1, 2, 4, 5)),
			ap(event.TypeTurnEnd, turnEnd, nil),
			ap(event.TypeTurnStart, `{"turn":2,"trigger":{"kind":"message"}}`, nil), prompt,
			asst(1, text(long)),
		}), steps(begin(6, 10, "opaque"), begin(6, 6, "opaque"), keepLast(0), begin(9, 10))), []string{"PROV-3", "PROV-4"}},
		{"history", "PROV-5: while the last assistant message records a reply made on history the provider holds (a previous response, a conversation), compaction and prune are refused with compaction.provider_history; a later reply made without it lifts that", with(toolLoop, conformance.FromOps([]ops.Step{
			ap(event.TypeAssistantMessage, `{"turn":1,"step":3,"content":[`+text("ok")+`]`+provenance+`,"response":{"id":"resp_2","previousResponseId":"resp_1"}}`, app()),
		}), steps(begin(1, 1), prune(4)), conformance.FromOps([]ops.Step{
			ap(event.TypeAssistantMessage, `{"turn":1,"step":4,"content":[`+text("ok")+`]`+provenance+`,"response":{"id":"resp_3","conversation":"conv_1"}}`, app()),
		}), steps(begin(1, 1)), conformance.FromOps([]ops.Step{
			ap(event.TypeAssistantMessage, `{"turn":1,"step":5,"content":[`+text("ok")+`]`+provenance+`,"response":{"id":"resp_4"}}`, app()),
		}), steps(prune(4), begin(1, 1), abort("the history is ours again"))), []string{"PROV-5"}},
	}
	var out []conformance.Vector
	for _, c := range cases {
		out = append(out, vector("provider."+c.name+".001", conformance.TierRequired, c.desc, c.steps, c.rules...))
	}
	return out
}
