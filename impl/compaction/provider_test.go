package compaction_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/session"
)

// nativeBlock is a block with a provider's item (PROV-1): opaque or not,
// of a given type, with a payload of n bytes.
func nativeBlock(typ string, opaque bool, n int) string {
	o := ""
	if opaque {
		o = `"opaque":true,`
	}
	text := ""
	if typ != "provider-item" {
		text = `"text":"thought",`
	}
	return `{"type":"` + typ + `",` + text + `"native":{"provider":"anthropic","model":"claude-opus-4-5",` + o + `"item":{"type":"thinking","thinking":"thought","signature":"` + strings.Repeat("s", n) + `"}}}`
}

// providerTurn appends a turn whose assistant message holds blocks, and
// a closing answer; it returns the surface nodes (prompt, the message,
// the answer).
func providerTurn(t *testing.T, s *session.Session, turn int, blocks ...string) []int64 {
	t.Helper()
	tn := strings.Repeat("", 0) + string(rune('0'+turn))
	must := func(e event.Event, err error) int64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e.Seq
	}
	must(s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: raw(`{"turn":` + tn + `,"trigger":{"kind":"message"}}`)}))
	p := must(s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: raw(`{"content":[{"type":"text","text":"` + strings.Repeat("question ", 40) + `"}],"source":{"kind":"user"}}`)}, event.Intent{Op: event.Append()}))
	m := must(s.Append(context.Background(), event.Raw{Type: event.TypeAssistantMessage, Data: raw(`{"turn":` + tn + `,"step":1,"content":[` + strings.Join(blocks, ",") + `]}`)}, event.Intent{Op: event.Append()}))
	a := must(s.Append(context.Background(), event.Raw{Type: event.TypeAssistantMessage, Data: raw(`{"turn":` + tn + `,"step":2,"content":[{"type":"text","text":"` + strings.Repeat("answer ", 40) + `"}]}`)}, event.Intent{Op: event.Append()}))
	must(s.Append(context.Background(), event.Raw{Type: event.TypeTurnEnd, Data: raw(`{"turn":` + tn + `,"reason":{"kind":"completed"}}`)}))
	return []int64{p, m, a}
}

// TestOpaqueItems: PROV-4. A range holding an opaque item is refused
// with compaction.opaque_items, and nothing is appended, unless the
// summariser handles them (WithOpaqueItems); the same item without
// "opaque", a look-alike, is no obstacle; a selection stops before the
// first opaque node, or folds it with WithOpaqueSelection; the model
// agrees throughout.
func TestOpaqueItems(t *testing.T) {
	ctx := context.Background()
	for _, v := range []compaction.Vocabulary{compaction.CompactEvents, compaction.CompactionEvents} {
		s := session.New()
		one := providerTurn(t, s, 1, `{"type":"text","text":"plain"}`)
		two := providerTurn(t, s, 2, nativeBlock("reasoning", true, 300), `{"type":"text","text":"x"}`)
		three := providerTurn(t, s, 3, nativeBlock("reasoning", false, 300))
		if _, err := s.Append(ctx, event.Raw{Type: event.TypeTurnStart, Data: raw(`{"turn":4,"trigger":{"kind":"message"}}`)}); err != nil {
			t.Fatal(err)
		}
		n := s.Len()
		_, err := compaction.Begin(ctx, s, one[0], two[2], compaction.WithVocabulary(v))
		var opaque *event.Error
		if !errors.Is(err, event.CodeCompactionOpaqueItems) || s.Len() != n || !errors.As(err, &opaque) || opaque.Seq != -1 {
			t.Fatalf("%v: a range over an opaque item: %v (%d appended)", v, err, s.Len()-n)
		}
		if _, err := compaction.Begin(ctx, s, three[0], three[2], compaction.WithVocabulary(v), compaction.WithConcurrentAppends()); err != nil {
			t.Fatalf("%v: a non-opaque item refused: %v", v, err)
		} else if _, err := compaction.AbortOpen(s, nil); err != nil {
			t.Fatal(err)
		}
		sel, err := compaction.Select(s, compaction.KeepLast(0), compaction.WithNodeCuts(), compaction.WithOpenTurn())
		if err != nil || sel.Start != one[0] || sel.End != two[0] {
			t.Fatalf("%v: the selection %+v (%v), want it to stop before node %d", v, sel, err, two[1])
		}
		sel, err = compaction.Select(s, compaction.KeepLast(0), compaction.WithNodeCuts(), compaction.WithOpenTurn(), compaction.WithOpaqueSelection())
		if err != nil || sel.End != three[2] {
			t.Fatalf("%v: the selection with opaque items %+v (%v)", v, sel, err)
		}
		sum := func(context.Context, *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
			return summary, compaction.Meta{Provider: "p", Model: "m"}, nil
		}
		if _, err := compaction.Compact(ctx, s, one[0], two[2], sum, compaction.WithVocabulary(v), compaction.WithOpaqueItems()); err != nil {
			t.Fatalf("%v: with WithOpaqueItems: %v", v, err)
		}
		equalsModel(t, s)
	}
}

// TestProviderCompacted: PROV-3, PROV-4. After a node holding a provider's
// compaction (a replace of everything before it), a compaction may not
// start at or before it (compaction.provider_compacted); one starting
// after it may; a selection starts after it; a node with a compaction
// look-alike (a provider-item without "compaction": true, or a text block
// with "compaction": true) is no such boundary.
func TestProviderCompacted(t *testing.T) {
	ctx := context.Background()
	compactionItem := `{"type":"provider-item","text":"what came before","compaction":true,"native":{"provider":"openai","model":"gpt-5.1","opaque":true,"item":{"type":"compaction","id":"cmp_1","encrypted_content":"E"}}}`
	for _, lookAlike := range []bool{false, true} {
		s := session.New()
		one := providerTurn(t, s, 1, `{"type":"text","text":"a"}`)
		block := compactionItem
		if lookAlike {
			block = `{"type":"text","text":"what came before","compaction":true,"native":{"provider":"openai","model":"gpt-5.1","item":{"type":"message"}}}`
		}
		rep, err := s.Append(ctx, event.Raw{Type: event.TypeAssistantMessage, Data: raw(`{"turn":1,"step":3,"content":[` + block + `]}`)}, event.Intent{Op: event.Replace(one[0], one[2]), Sources: one})
		if err != nil {
			t.Fatal(err)
		}
		two := providerTurn(t, s, 2, `{"type":"text","text":"b"}`)
		_, err = compaction.Begin(ctx, s, rep.Seq, two[1], compaction.WithOpaqueItems(), compaction.WithVocabulary(compaction.CompactionEvents))
		if lookAlike {
			if err != nil {
				t.Fatalf("a look-alike is a boundary: %v", err)
			}
			compaction.AbortOpen(s, nil)
			continue
		}
		var compacted *event.Error
		if !errors.Is(err, event.CodeCompactionProviderCompacted) || !errors.As(err, &compacted) || compacted.Seq != -1 {
			t.Fatalf("a range from the provider's compaction: %v", err)
		}
		sel, err := compaction.Select(s, compaction.KeepLast(1), compaction.WithNodeCuts(), compaction.WithOpenTurn())
		if err != nil || sel.Start != two[0] {
			t.Fatalf("the selection %+v (%v), want it to start at %d", sel, err, two[0])
		}
		sel2, err := compaction.Select(s, compaction.TargetTokens(1, nil), compaction.WithNodeCuts(), compaction.WithOpenTurn())
		if err != nil || sel2.Start != two[0] || !sel2.OverBudget {
			t.Fatalf("a target selection %+v (%v): the provider's node stays, so the budget is missed", sel2, err)
		}
		if _, err := compaction.Begin(ctx, s, two[0], two[1], compaction.WithVocabulary(compaction.CompactionEvents)); err != nil {
			t.Fatalf("a range after it: %v", err)
		}
		equalsModel(t, s)
	}
}

// TestProviderHistory: PROV-5. While the last assistant message records a
// reply on history the provider holds (previousResponseId, conversation),
// Begin, Select-and-begin and PruneToolResult are refused with
// compaction.provider_history and append nothing; an empty string, a
// response without them, or a later reply without them lift it; the
// response record of a tool/result or a user message does not count.
func TestProviderHistory(t *testing.T) {
	ctx := context.Background()
	for _, held := range []string{`{"previousResponseId":"resp_1"}`, `{"conversation":"conv_1","id":"r"}`} {
		s := session.New()
		nodes := conversation(t, s, 1, []string{"a"}, []string{"a"})
		if _, err := s.Append(ctx, event.Raw{Type: event.TypeAssistantMessage, Data: raw(`{"turn":1,"step":3,"content":[{"type":"text","text":"x"}],"response":` + held + `}`)}, event.Intent{Op: event.Append()}); err != nil {
			t.Fatal(err)
		}
		n := s.Len()
		if _, err := compaction.Begin(ctx, s, nodes[0], nodes[0]); !errors.Is(err, event.CodeCompactionProviderHistory) {
			t.Fatalf("%s: Begin: %v", held, err)
		}
		if _, err := compaction.BeginSelected(ctx, s, compaction.KeepLast(0), []compaction.SelectOption{compaction.WithNodeCuts(), compaction.WithOpenTurn()}); !errors.Is(err, event.CodeCompactionProviderHistory) {
			t.Fatalf("%s: BeginSelected: %v", held, err)
		}
		if _, err := compaction.PruneToolResult(s, nodes[2], []json.RawMessage{raw(`{"type":"text","text":"[pruned]"}`)}); !errors.Is(err, event.CodeCompactionProviderHistory) {
			t.Fatalf("%s: prune: %v", held, err)
		}
		if s.Len() != n {
			t.Fatalf("%s: %d events appended", held, s.Len()-n)
		}
		// Not the last assistant message any more: lifted.
		if _, err := s.Append(ctx, event.Raw{Type: event.TypeAssistantMessage, Data: raw(`{"turn":1,"step":4,"content":[{"type":"text","text":"y"}],"response":{"previousResponseId":"","id":"r2"}}`)}, event.Intent{Op: event.Append()}); err != nil {
			t.Fatal(err)
		}
		if _, err := compaction.PruneToolResult(s, nodes[2], []json.RawMessage{raw(`{"type":"text","text":"[pruned]"}`)}); err != nil {
			t.Fatalf("%s: prune after a reply on our own history: %v", held, err)
		}
		equalsModel(t, s)
	}
}

// TestMeterProviderItems: PROV-7. The meter prices a block's portable part
// only: a signature's length changes nothing; a provider-item costs its
// text's length (4 without one); another provider's block type carrying
// native is a provider item; the same block without native is priced by
// its JSON as before (the look-alike).
func TestMeterProviderItems(t *testing.T) {
	est := func(blocks ...string) int {
		var c []json.RawMessage
		for _, b := range blocks {
			c = append(c, raw(b))
		}
		return message.EstimateTokens(message.Message{Role: message.RoleAssistant, Content: c})
	}
	short, long := est(nativeBlock("reasoning", true, 10)), est(nativeBlock("reasoning", true, 5000))
	if short != long || short != 4+2+4 {
		t.Fatalf("reasoning with a short signature %d, a long one %d, want 10 both", short, long)
	}
	if a, b := est(nativeBlock("provider-item", true, 10)), est(nativeBlock("provider-item", true, 5000)); a != 8 || b != 8 {
		t.Fatalf("a provider item without text: %d and %d, want 8", a, b)
	}
	withText := `{"type":"provider-item","text":"` + strings.Repeat("x", 40) + `","native":{"provider":"openai","item":{"type":"compaction","encrypted_content":"` + strings.Repeat("E", 4000) + `"}}}`
	if got := est(withText); got != 4+10+4 {
		t.Fatalf("a provider item with 40 characters of text: %d, want 18", got)
	}
	foreign := `{"type":"server_tool_use","native":{"provider":"anthropic","item":{"type":"server_tool_use","id":"x","input":{}}}}`
	bare := `{"type":"server_tool_use","id":"x","name":"web_search","input":{"query":"` + strings.Repeat("q", 400) + `"}}`
	if got := est(foreign); got != 8 {
		t.Fatalf("another provider's type with native: %d, want 8", got)
	}
	if got := est(bare); got <= 100 {
		t.Fatalf("the same type without native is priced by its JSON: %d", got)
	}
}
