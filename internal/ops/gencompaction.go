package ops

import (
	"encoding/json"

	"github.com/surfacelog/surface/impl/event"
)

// Generators of compaction steps (COMP-*), aimed at the model's state:
// ranges over the surface (whole, head, tail, one node, any span, off the
// surface, reversed), with and without snapping, in both vocabularies.

func genBlocks(t Chooser, label string) []json.RawMessage {
	n := 1 + t.Intn(2, label+"_n")
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(`{"type":"text","text":` + quote(genString(t, label)) + `}`)
	}
	if t.Intn(12, label+"_bad") == 0 {
		out[0] = json.RawMessage(`{"text":"a block without a type"}`) // event.data_invalid
	}
	return out
}

// GenBegin returns a compaction begin aimed at the surface of st.
func GenBegin(t Chooser, st State) Step {
	s := Step{Kind: KindBegin, Snap: boolean(t, "snap"), V2: t.Intn(3, "v2") == 0}
	n := len(st.Surface)
	if n == 0 || t.Intn(10, "offSurface") == 0 {
		s.Start = between(t, -1, int64(len(st.Events))+1, "start")
		s.End = between(t, -1, int64(len(st.Events))+1, "end")
		return s
	}
	var i, j int
	switch t.Intn(4, "shape") {
	case 0: // head: what a selection policy proposes
		j = t.Intn(n, "j")
	case 1: // one node
		i = t.Intn(n, "i")
		j = i
	case 2: // reversed
		j = t.Intn(n, "j")
		i = j + t.Intn(n-j, "i")
	default:
		i = t.Intn(n, "i")
		j = i + t.Intn(n-i, "j")
	}
	s.Start, s.End = st.Surface[i], st.Surface[j]
	return s
}

// GenCommit returns a commit of the open compaction.
func GenCommit(t Chooser, st State) Step {
	s := Step{Kind: KindCommit, Blocks: genBlocks(t, "summary"), Provider: genString(t, "provider"), Model: pick(t, []string{"m1", "deepseek-chat"}, "model")}
	// Framed commits of the short ranges drawn here are mostly refused as
	// not smaller (COMP-11): two in three commits are plain, so that
	// commits also succeed.
	s.Plain = between(t, 0, 2, "plain") > 0
	if boolean(t, "maxTokens") {
		m := between(t, 1, 100000, "max")
		s.MaxTokens = &m
	}
	return s
}

// GenAbort returns an abort of the open compaction.
func GenAbort(t Chooser, st State) Step {
	return Step{Kind: KindAbort, Reason: pick(t, []string{"summariser failed", "", "context \"overflow\"", "timeout\n"}, "reason")}
}

// GenPrune returns a prune, of a tool/result on the surface most of the
// time.
func GenPrune(t Chooser, st State) Step {
	s := Step{Kind: KindPrune, Blocks: genBlocks(t, "pruned")}
	var results []int64
	for _, q := range st.Surface {
		if st.Events[q].Type == event.TypeToolResult {
			results = append(results, q)
		}
	}
	if len(results) > 0 && t.Intn(5, "prunable") > 0 {
		s.Seq = pick(t, results, "seq")
	} else {
		s.Seq = between(t, -1, int64(len(st.Events)), "seq")
	}
	return s
}

// GenSelect returns a selection under one of the two policies.
func GenSelect(t Chooser, st State) Step {
	if boolean(t, "byTokens") {
		return Step{Kind: KindSelect, KeepLast: -1, KeepTokens: t.Intn(200, "tokens")}
	}
	return Step{Kind: KindSelect, KeepLast: t.Intn(len(st.Surface)+2, "keep")}
}

// GenBalance returns a balance query, of a surface node most of the time.
func GenBalance(t Chooser, st State) Step {
	s := Step{Kind: KindBalance, After: boolean(t, "after")}
	if len(st.Surface) > 0 && t.Intn(5, "onSurface") > 0 {
		s.Seq = pick(t, st.Surface, "seq")
	} else {
		s.Seq = between(t, -1, int64(len(st.Events)), "seq")
	}
	return s
}

// GenToolTraffic returns an append of a turn boundary, an assistant
// message with tool calls, or a tool result answering one of them: the
// traffic that makes tool pairing and the compaction lock interesting.
func GenToolTraffic(t Chooser, st State) Step {
	id := "call-" + string(rune('0'+t.Intn(4, "callid")))
	switch t.Intn(6, "traffic") {
	case 0:
		return Step{Kind: KindAppend, Type: event.TypeTurnStart, Data: json.RawMessage(`{"turn":` + string(rune('1'+t.Intn(3, "turn"))) + `,"trigger":{"kind":"message"}}`)}
	case 1:
		return Step{Kind: KindAppend, Type: event.TypeTurnEnd, Data: json.RawMessage(`{"turn":1,"reason":{"kind":"completed"}}`)}
	case 2, 3:
		calls := `{"type":"tool-call","id":"` + id + `","name":"read","arguments":{}}`
		if boolean(t, "twoCalls") {
			calls += `,{"type":"tool-call","id":"call-` + string(rune('0'+t.Intn(4, "callid2"))) + `","name":"ls","arguments":{}}`
		}
		return Step{Kind: KindAppend, Type: event.TypeAssistantMessage, Data: json.RawMessage(`{"turn":1,"step":1,"content":[{"type":"text","text":"x"},` + calls + `]}`), Intent: &event.Intent{Op: event.Append()}}
	default:
		return Step{Kind: KindAppend, Type: event.TypeToolResult, Data: json.RawMessage(`{"turn":1,"step":1,"callId":"` + id + `","content":[{"type":"text","text":"` + id + ` done"}],"isError":false}`), Intent: &event.Intent{Op: event.Append()}}
	}
}

// GenCompactionStep returns any compaction step, or tool traffic.
func GenCompactionStep(t Chooser, st State) Step {
	switch t.Intn(10, "compactionKind") {
	case 0, 1:
		return GenBegin(t, st)
	case 2:
		return GenCommit(t, st)
	case 3:
		return GenAbort(t, st)
	case 4:
		return GenPrune(t, st)
	case 5:
		return GenSelect(t, st)
	case 6:
		return GenBalance(t, st)
	case 7:
		if t.Intn(3, "forget") == 0 {
			return Step{Kind: KindForget}
		}
		return Step{Kind: KindRepair}
	default:
		return GenToolTraffic(t, st)
	}
}

// GenProviderReply returns an append of an assistant message as a
// provider's reply records it (spec §14): with an opaque item (a signed
// thinking block), with a non-opaque one (an item id), as a provider's
// compaction replacing the whole surface (PROV-3), or with a response
// record saying the provider holds the history (PROV-5) or not.
func GenProviderReply(t Chooser, st State) Step {
	native := func(opaque bool) string {
		o := ""
		if opaque {
			o = `"opaque":true,`
		}
		return `"native":{"provider":"anthropic","model":"claude-opus-4-5",` + o + `"item":{"type":"thinking","thinking":"t","signature":"sig"}}`
	}
	msg := func(content, rest string) string {
		return `{"turn":1,"step":1,"content":[` + content + `]` + rest + `}`
	}
	s := Step{Kind: KindAppend, Type: event.TypeAssistantMessage, Intent: &event.Intent{Op: event.Append()}}
	switch t.Intn(6, "providerReply") {
	case 0:
		s.Data = json.RawMessage(msg(`{"type":"reasoning","text":"t",`+native(true)+`},{"type":"text","text":"x"}`, ""))
	case 1:
		s.Data = json.RawMessage(msg(`{"type":"text","text":"x",`+native(false)+`}`, ""))
	case 2:
		s.Data = json.RawMessage(msg(`{"type":"provider-item","text":"summary","compaction":true,`+native(true)+`}`, ""))
		if n := len(st.Surface); n > 0 {
			s.Intent = &event.Intent{Op: event.Replace(st.Surface[0], st.Surface[n-1]), Sources: append([]int64(nil), st.Surface...)}
		}
	case 3:
		s.Data = json.RawMessage(msg(`{"type":"text","text":"x"}`, `,"response":{"id":"r","previousResponseId":"p"}`))
	case 4:
		s.Data = json.RawMessage(msg(`{"type":"text","text":"x"}`, `,"response":{"id":"r","conversation":"c"}`))
	default:
		s.Data = json.RawMessage(msg(`{"type":"text","text":"x"}`, `,"response":{"id":"r"}`))
	}
	return s
}

// GenBeginOpaque is GenBegin saying the summariser handles opaque items
// (PROV-4).
func GenBeginOpaque(t Chooser, st State) Step {
	s := GenBegin(t, st)
	s.Opaque = true
	return s
}

// GenSelectOpaque is GenSelect letting the selection fold opaque items.
func GenSelectOpaque(t Chooser, st State) Step {
	s := GenSelect(t, st)
	s.Opaque = true
	return s
}
