package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/session"
)

// byBytes is a token estimate that tells messages of different sizes
// apart: the byte length of their content blocks.
func byBytes(m message.Message) int {
	n := 0
	for _, c := range m.Content {
		n += len(c)
	}
	return n
}

// TestTokensAfterReplace: Tokens is the sum of the estimates of the
// messages Messages returns, after a replace that lands in the newest
// entries and after one that lands in the older ones, with a replacement
// larger and one smaller than what it shadows.
func TestTokensAfterReplace(t *testing.T) {
	for _, n := range []int{3, 40, 200} { // within the view's tail and beyond it
		for _, text := range []string{"x", "a much longer replacement text than any of the originals"} {
			t.Run(fmt.Sprintf("%d/%d", n, len(text)), func(t *testing.T) {
				s := session.New(session.WithTokenEstimator(byBytes))
				for i := range n {
					if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(fmt.Sprintf(`{"content":[{"type":"text","text":"message %d"}],"source":{"kind":"user"}}`, i))}, appendI().Value()); err != nil {
						t.Fatal(err)
					}
				}
				for _, r := range [][2]int64{{int64(n) - 2, int64(n) - 1}, {0, 0}} { // the newest nodes, then the oldest
					lo, hi := r[0], r[1]
					_ = s.Tokens() // a snapshot before the replace
					data := json.RawMessage(fmt.Sprintf(`{"content":[{"type":"text","text":%q}],"source":{"kind":"user"}}`, text))
					e, err := s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: data}, replaceI(lo, hi, sources(lo, hi)...).Value())
					if err != nil {
						t.Fatal(err)
					}
					want := 0
					for _, m := range s.Messages().All() {
						want += byBytes(m)
					}
					if got := s.Tokens(); got != want {
						t.Fatalf("after replacing %d..%d by %d: Tokens %d, the messages' estimates sum to %d", lo, hi, e.Seq, got, want)
					}
				}
			})
		}
	}
}

// TestEmptyAssistantGivesNoMessage: an assistant/message with no content
// blocks is a surface node but derives no message (SURF-19), as in the
// model; one with a block derives one.
func TestEmptyAssistantGivesNoMessage(t *testing.T) {
	for _, c := range []struct {
		data string
		msgs int
	}{
		{`{"turn":1,"step":1,"content":[]}`, 1},
		{`{"turn":1,"step":1,"content":[{"type":"text","text":"hello"}]}`, 2},
	} {
		s, m := build(t, []appendCall{
			ap(event.TypeTurnStart, turnStart, nil),
			ap(event.TypeUserMessage, user, appendI()),
			ap(event.TypeAssistantMessage, c.data, appendI()),
		})
		if got := s.Surface().Len(); got != 2 {
			t.Fatalf("%s: surface of %d nodes, want 2", c.data, got)
		}
		got := s.Messages().Slice()
		if len(got) != c.msgs {
			t.Fatalf("%s: %d messages, want %d", c.data, len(got), c.msgs)
		}
		if d := cmp.Diff(m.Messages(), got); d != "" {
			t.Fatalf("%s: messages differ from the model's (-model +impl):\n%s", c.data, d)
		}
	}
}

// sources are the seqs lo..hi.
func sources(lo, hi int64) []int64 {
	var out []int64
	for q := lo; q <= hi; q++ {
		out = append(out, q)
	}
	return out
}
