package compaction_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// lastEnd returns the data of the last compact/end of s, or "".
func lastEnd(s *session.Session) string {
	events := s.Events()
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == event.TypeCompactEnd {
			return string(events[i].Data)
		}
	}
	return ""
}

// TestCompactNeverWedges: COMP-2, COMP-6, COMP-9. Whatever goes wrong
// after Begin, Compact aborts the compaction (an end event with the
// reason), returns the failure with its code, and the next compaction
// can begin: a summariser error, a summary providers would refuse, a
// summariser panic (aborted, then panicking again), a cancelled context.
func TestCompactNeverWedges(t *testing.T) {
	s := session.New()
	nodes := conversation(t, s, 1, []string{"a"}, []string{"a"})
	cases := []struct {
		name      string
		summarize compaction.Summarizer
		ctx       func() context.Context
		want      error
		endSays   string
	}{
		{"summariser error", func(ctx context.Context, op *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
			return nil, compaction.Meta{}, errors.New("model overloaded")
		}, context.Background, nil, "model overloaded"},
		{"tool-call block", func(ctx context.Context, op *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
			return []json.RawMessage{raw(`{"type":"tool-call","id":"x","name":"n","arguments":{}}`)}, compaction.Meta{}, nil
		}, context.Background, event.CodeCompactionSummaryInvalid, "compaction.summary_invalid"},
		{"tool-result block", func(ctx context.Context, op *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
			return []json.RawMessage{raw(`{"type":"tool-result","toolCallId":"zz","content":[],"isError":false}`)}, compaction.Meta{}, nil
		}, context.Background, event.CodeCompactionSummaryInvalid, "tool-result"},
		{"unknown block", func(ctx context.Context, op *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
			return []json.RawMessage{raw(`{"type":"bogus"}`)}, compaction.Meta{}, nil
		}, context.Background, event.CodeCompactionSummaryInvalid, "bogus"},
		{"empty summary", func(ctx context.Context, op *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
			return []json.RawMessage{}, compaction.Meta{}, nil
		}, context.Background, event.CodeCompactionSummaryInvalid, "empty"},
		{"block no record holds", func(ctx context.Context, op *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
			return []json.RawMessage{raw(`{"type":"text","text":"a","n":-0}`)}, compaction.Meta{}, nil
		}, context.Background, event.CodeDataNotJSON, "event.data_not_json"},
		{"cancelled while summarising", func(ctx context.Context, op *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
			<-ctx.Done() // a summariser blocked on its model call
			return nil, compaction.Meta{}, ctx.Err()
		}, func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			go func() { time.Sleep(10 * time.Millisecond); cancel() }()
			return ctx
		}, context.Canceled, "context canceled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := s.Len()
			_, err := compaction.Compact(c.ctx(), s, nodes[0], nodes[len(nodes)-1], c.summarize)
			if err == nil || (c.want != nil && !errors.Is(err, c.want)) || !strings.Contains(err.Error(), "compaction") {
				t.Fatalf("Compact: %v, want %v", err, c.want)
			}
			if strings.Contains(err.Error(), "event 0") {
				t.Errorf("the error names an event never appended: %v", err)
			}
			if _, open := compaction.InProgress(s); open {
				t.Fatal("the lock is still held")
			}
			if end := lastEnd(s); !strings.Contains(end, c.endSays) {
				t.Errorf("end event %s does not say %q", end, c.endSays)
			}
			if got := s.Len() - before; got != 2 {
				t.Errorf("appended %d events, want the start and the end", got)
			}
		})
	}
	t.Run("summariser panic", func(t *testing.T) {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v, want the summariser's own panic", r)
			}
			if _, open := compaction.InProgress(s); open {
				t.Fatal("the lock is still held after a panic")
			}
			if end := lastEnd(s); !strings.Contains(end, "panicked: boom") {
				t.Errorf("end event %s", end)
			}
		}()
		compaction.Compact(context.Background(), s, nodes[0], nodes[len(nodes)-1], func(ctx context.Context, op *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
			panic("boom")
		})
	})
	// And after all that, a compaction works.
	if _, err := compaction.Compact(context.Background(), s, nodes[0], nodes[len(nodes)-1], func(ctx context.Context, op *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
		return summary, compaction.Meta{Provider: "p", Model: "m"}, nil
	}, plain...); err != nil {
		t.Fatal(err)
	}
	// A context cancelled before Begin begins nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := s.Len()
	if _, err := compaction.Begin(ctx, s, s.Surface().At(0), s.Surface().At(0)); !errors.Is(err, context.Canceled) || s.Len() != before {
		t.Fatalf("Begin with a cancelled context: %v, %d events appended", err, s.Len()-before)
	}
}

// TestCommitRefusalKeepsTheOperation: COMP-9. Commit refuses a summary
// providers would refuse before anything is appended; the operation stays
// open, so its caller can commit another summary or abort.
func TestCommitRefusalKeepsTheOperation(t *testing.T) {
	s := session.New()
	nodes := conversation(t, s, 1, nil, nil)
	op, err := compaction.Begin(context.Background(), s, nodes[0], nodes[0])
	if err != nil {
		t.Fatal(err)
	}
	before := s.Len()
	for _, bad := range [][]json.RawMessage{nil, {raw(`{"type":"tool-call"}`)}, {raw(`{"type":"text"}`)}, {raw(`[1]`)}} {
		if _, err := op.Commit(context.Background(), bad, compaction.Meta{}); !errors.Is(err, event.CodeCompactionSummaryInvalid) || s.Len() != before {
			t.Fatalf("commit %s: %v", bad, err)
		}
	}
	if _, err := op.Commit(context.Background(), summary, compaction.Meta{Provider: "p", Model: "m"}, plain...); err != nil {
		t.Fatal(err)
	}
}

// TestAbortOpenKeepsTheTurn: a compaction whose Operation was lost (begun
// and never finished) is ended by AbortOpen with its own end event; the
// turn in progress stays open, unlike a repair.
func TestAbortOpenKeepsTheTurn(t *testing.T) {
	for _, v := range []compaction.Vocabulary{compaction.CompactEvents, compaction.CompactionEvents} {
		s := session.New()
		nodes := conversation(t, s, 1, nil, nil)
		if seq, err := compaction.AbortOpen(s, nil); err != nil || seq != -1 {
			t.Fatalf("nothing open: %d %v", seq, err)
		}
		op, err := compaction.Begin(context.Background(), s, nodes[0], nodes[0], compaction.WithVocabulary(v))
		if err != nil {
			t.Fatal(err)
		}
		seq, err := compaction.AbortOpen(s, errors.New("the harness lost it"))
		if err != nil || seq != op.StartSeq {
			t.Fatalf("AbortOpen: %d %v", seq, err)
		}
		events := s.Events()
		last := events[len(events)-1]
		if !strings.Contains(string(last.Data), "the harness lost it") || (v == compaction.CompactionEvents && !strings.Contains(string(last.Data), `"compactionId":"c`)) {
			t.Fatalf("end event %s %s", last.Type, last.Data)
		}
		for _, e := range events {
			if e.Type == event.TypeTurnEnd {
				t.Fatal("AbortOpen ended the turn")
			}
		}
		// A second compaction opens: the lost operation must see that its
		// own compaction ended, not merely that some compaction is open.
		second, err := compaction.Begin(context.Background(), s, nodes[0], nodes[0], compaction.WithVocabulary(v))
		if err != nil {
			t.Fatalf("after AbortOpen: %v", err)
		}
		before := s.Len()
		if _, err := op.Commit(context.Background(), summary, compaction.Meta{Provider: "p", Model: "m"}, plain...); !errors.Is(err, event.CodeCompactionFinished) || s.Len() != before {
			t.Fatalf("the lost operation's commit after its compaction was ended: %v (%d events appended)", err, s.Len()-before)
		}
		if err := op.Abort(nil); !errors.Is(err, event.CodeCompactionFinished) || s.Len() != before {
			t.Fatalf("the lost operation's abort: %v", err)
		}
		if _, err := second.Commit(context.Background(), summary, compaction.Meta{Provider: "p", Model: "m"}, plain...); err != nil {
			t.Fatalf("the second compaction: %v", err)
		}
	}
}

// TestLockHeldAgainstLookAlikeEnds: COMP-2 with ends that look like the
// open compaction's and are not: a compaction/end naming another
// compactionId, and an end of the other vocabulary, appended by the
// program itself, leave the lock held (Begin is compaction.locked) and the
// open operation can still commit. The open compaction's own end (its id
// written with an escape, the same id by value) releases it.
func TestLockHeldAgainstLookAlikeEnds(t *testing.T) {
	for _, v := range []compaction.Vocabulary{compaction.CompactEvents, compaction.CompactionEvents} {
		s := session.New()
		nodes := conversation(t, s, 1, nil, nil)
		op, err := compaction.Begin(context.Background(), s, nodes[0], nodes[0], compaction.WithVocabulary(v), compaction.WithID("c1"), compaction.WithConcurrentAppends())
		if err != nil {
			t.Fatal(err)
		}
		lookAlikes := []struct {
			t    event.Type
			data string
		}{
			{event.TypeCompactionEnd, `{"compactionId":"c2","turn":1,"error":"another"}`},
			{event.TypeCompactionEnd, `{"compactionId":"C1","turn":1,"error":"another"}`},
		}
		if v == compaction.CompactEvents {
			// A compaction/end (any id) does not end a compact/start.
			lookAlikes = append(lookAlikes, struct {
				t    event.Type
				data string
			}{event.TypeCompactionEnd, `{"compactionId":"c1","turn":1,"error":"another"}`})
		} else {
			// A compact/end does not end a compaction/start.
			lookAlikes = append(lookAlikes, struct {
				t    event.Type
				data string
			}{event.TypeCompactEnd, `{"turn":1,"error":"another"}`})
		}
		for _, la := range lookAlikes {
			if _, err := s.Append(context.Background(), event.Raw{Type: la.t, Data: json.RawMessage(la.data)}); err != nil {
				t.Fatal(err)
			}
			if _, err := compaction.Begin(context.Background(), s, nodes[0], nodes[0]); !errors.Is(err, event.CodeCompactionLocked) {
				t.Fatalf("%v: after %s %s, Begin: %v, want compaction.locked", v, la.t, la.data, err)
			}
		}
		if _, err := op.Commit(context.Background(), summary, compaction.Meta{Provider: "p", Model: "m"}, plain...); err != nil {
			t.Fatalf("%v: the open operation's commit after look-alike ends: %v", v, err)
		}
		if _, err := compaction.Begin(context.Background(), s, nodes[len(nodes)-1], nodes[len(nodes)-1]); errors.Is(err, event.CodeCompactionLocked) {
			t.Fatalf("%v: the lock outlived its commit: %v", v, err)
		}
	}
	// The same id written another way is the same compaction (by value).
	s := session.New()
	nodes := conversation(t, s, 1, nil, nil)
	if _, err := compaction.Begin(context.Background(), s, nodes[0], nodes[0], compaction.WithVocabulary(compaction.CompactionEvents), compaction.WithID("c1")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeCompactionEnd, Data: json.RawMessage(`{"compactionId":"c\u0031","turn":1,"error":"ended by hand"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := compaction.Begin(context.Background(), s, nodes[0], nodes[0]); errors.Is(err, event.CodeCompactionLocked) {
		t.Fatalf("the open compaction's own end (escaped id) did not release the lock: %v", err)
	}
}
