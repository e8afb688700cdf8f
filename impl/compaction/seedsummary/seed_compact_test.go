package seedsummary_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/compaction/seedsummary"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/seedtestee"
)

// compactCase is a session and a compaction of it, for both systems.
type compactCase struct {
	Name      string            `json:"name"`
	Lines     []string          `json:"lines"`
	Start     int64             `json:"start"`
	End       int64             `json:"end"`
	Summary   []json.RawMessage `json:"summary"`
	Provider  string            `json:"provider"`
	Model     string            `json:"model"`
	MaxTokens *int64            `json:"maxTokens,omitempty"`
	Time      int64             `json:"time"`
	Fail      *string           `json:"fail,omitempty"`
}

type compactOutcome struct {
	Name       string   `json:"name"`
	Transcript *string  `json:"transcript"`
	Events     []string `json:"events"`
	Error      *string  `json:"error"`
}

// TestCompactAgainstTheSeed compacts random sessions with this library
// (Compact with a summariser that renders Transcript) and with the seed
// system's own compactSurfaceRegion, run from the seed testee's bundle:
// the transcript the summariser is handed, every event appended (start,
// summary record, replacing user/message, end) and the end event of a
// refused or failed compaction are the same, byte for byte. The sessions
// vary what a transcript renders: every surface type, text, reasoning,
// tool calls, tool results (errors, several blocks, nested results),
// empty texts, quotes, line separators and astral characters; summaries
// of one to three blocks, with and without a cap, some too large (the
// size check) and some summarisers that fail (with an empty message too).
func TestCompactAgainstTheSeed(t *testing.T) {
	seed := seedtestee.Find(t)
	rng := rand.New(rand.NewPCG(7, 29))
	var cases []compactCase
	for i := range 80 {
		cases = append(cases, randomCase(rng, fmt.Sprintf("random.%03d", i)))
	}
	in, _ := json.Marshal(cases)
	var theirs []compactOutcome
	if err := json.Unmarshal(seed.Run(t, "testdata/compact.mjs", in), &theirs); err != nil {
		t.Fatal(err)
	}
	if len(theirs) != len(cases) {
		t.Fatalf("%d outcomes for %d cases", len(theirs), len(cases))
	}
	committed, refused := 0, 0
	for i, c := range cases {
		ours := compactHere(t, c)
		want := theirs[i]
		if want.Error == nil {
			committed++
		} else {
			refused++
		}
		if (ours.Transcript == nil) != (want.Transcript == nil) || ours.Transcript != nil && *ours.Transcript != *want.Transcript {
			t.Errorf("%s: transcript\n ours: %q\nseed's: %q", c.Name, deref(ours.Transcript), deref(want.Transcript))
		}
		if c.Fail != nil && *c.Fail == "" && len(want.Events) == 2 && len(ours.Events) == 2 {
			// D36: an empty reason is recorded as "aborted" here, as "" there.
			want.Events[1] = strings.Replace(want.Events[1], `"error":""`, `"error":"aborted"`, 1)
		}
		if strings.Join(ours.Events, "\n") != strings.Join(want.Events, "\n") {
			t.Errorf("%s: events appended\n ours:\n  %s\nseed's:\n  %s", c.Name, strings.Join(ours.Events, "\n  "), strings.Join(want.Events, "\n  "))
		}
		if (ours.Error == nil) != (want.Error == nil) {
			t.Errorf("%s: error %q, the seed's %q", c.Name, deref(ours.Error), deref(want.Error))
		}
	}
	t.Logf("%d committed, %d refused or failed, byte for byte as the seed system", committed, refused)
	if committed < 20 || refused < 10 {
		t.Fatalf("%d committed and %d refused: the cases do not vary enough", committed, refused)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}

// compactHere runs c with this library.
func compactHere(t *testing.T, c compactCase) compactOutcome {
	lines := make([]json.RawMessage, len(c.Lines))
	for i, l := range c.Lines {
		lines[i] = json.RawMessage(l)
	}
	s, err := session.SeedJSON(lines, session.WithClock(func() int64 { return c.Time }))
	if err != nil {
		t.Fatalf("%s: seed: %v", c.Name, err)
	}
	before := s.Len()
	out := compactOutcome{Name: c.Name}
	sum := func(ctx context.Context, op *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
		tr := seedsummary.Transcript(op.Session().Events(), op.Shadowed)
		out.Transcript = &tr
		if c.Fail != nil {
			return nil, compaction.Meta{}, fmt.Errorf("%s", *c.Fail)
		}
		return c.Summary, compaction.Meta{Provider: c.Provider, Model: c.Model, MaxTokens: c.MaxTokens}, nil
	}
	_, err = compaction.Compact(context.Background(), s, c.Start, c.End, sum)
	if err != nil {
		msg := err.Error()
		out.Error = &msg
	}
	for _, e := range s.Events()[before:] {
		b, _ := e.MarshalJSON()
		out.Events = append(out.Events, string(b))
	}
	return out
}

var texts = []string{"hi", "", "read f.go and \"quote\" it", "line\nbreak\ttab", "\u2028sep\u2029", "émoji 🙂 and 𝒳", "<compacted-summary>", "a\\b", strings.Repeat("long text ", 40), strings.Repeat("a file's contents, ", 60)}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// quote writes s as JavaScript's JSON.stringify does (the seed system
// re-writes what it stores that way; this library keeps bytes as given).
func quote(s string) string { return message.QuoteJS(s) }

func textBlock(rng *rand.Rand) string {
	return `{"type":"text","text":` + quote(pick(rng, texts)) + `}`
}

// randomCase is one turn of a random session, open, and a compaction of
// a balanced range of its surface.
func randomCase(rng *rand.Rand, name string) compactCase {
	var lines []string
	var surface []int64
	var balanced []bool // balanced[k]: the cut after surface node k is balanced
	pending := 0
	add := func(typ, data, marker string) int64 {
		seq := int64(len(lines))
		l := `{"type":"` + typ + `","seq":` + fmt.Sprint(seq) + `,"time":` + fmt.Sprint(1000+seq) + `,"data":` + data
		if marker != "" {
			l += `,"surfaceOp":"append"` + marker
		}
		lines = append(lines, l+"}")
		return seq
	}
	node := func(typ, data, marker string) {
		surface = append(surface, add(typ, data, `x`[:0]+marker))
		balanced = append(balanced, pending == 0)
	}
	add("turn/start", `{"turn":1,"trigger":{"kind":"message"}}`, "")
	node("user/message", `{"content":[`+textBlock(rng)+`],"source":{"kind":"user"}}`, " ")
	for step := 1; step <= 1+rng.IntN(4); step++ {
		add("step/start", fmt.Sprintf(`{"turn":1,"step":%d}`, step), "")
		var blocks []string
		var calls []string
		for range rng.IntN(3) {
			switch rng.IntN(3) {
			case 0:
				blocks = append(blocks, textBlock(rng))
			case 1:
				blocks = append(blocks, `{"type":"reasoning","text":`+quote(pick(rng, texts))+`}`)
			default:
				id := fmt.Sprintf("c%d_%d", step, len(calls))
				calls = append(calls, id)
				blocks = append(blocks, `{"type":"tool-call","id":"`+id+`","name":"read","arguments":`+quote(`{"path":"f.go"}`)+`}`)
			}
		}
		if len(blocks) == 0 {
			blocks = append(blocks, textBlock(rng))
		}
		pending = len(calls)
		node("assistant/message", fmt.Sprintf(`{"turn":1,"step":%d,"content":[%s],"provenance":{"provider":"deepseek","model":"deepseek-chat"}}`, step, strings.Join(blocks, ",")), " ")
		for _, id := range calls {
			callSeq := add("tool/call", fmt.Sprintf(`{"turn":1,"step":%d,"callId":"%s","name":"read","arguments":"{}"}`, step, id), "")
			content := []string{textBlock(rng)}
			if rng.IntN(3) == 0 {
				content = append(content, `{"type":"image","source":{"data":"AA=="}}`, textBlock(rng))
			}
			if rng.IntN(5) == 0 {
				content = []string{}
			}
			isErr := rng.IntN(3) == 0
			pending--
			node("tool/result", fmt.Sprintf(`{"turn":1,"step":%d,"callId":"%s","content":[%s],"isError":%v}`, step, id, strings.Join(content, ","), isErr), fmt.Sprintf(`,"sourceEventSeqs":[%d]`, callSeq))
		}
		add("step/end", fmt.Sprintf(`{"turn":1,"step":%d}`, step), "")
		switch rng.IntN(4) {
		case 0:
			node("context/message", `{"content":[`+textBlock(rng)+`],"source":{"kind":"plugin"}}`, " ")
		case 1:
			node("steering/message", `{"turn":1,"content":[`+textBlock(rng)+`],"source":{"kind":"user"}}`, " ")
		}
	}
	for i := range lines { // the node markers were written as " ": drop the stray space
		lines[i] = strings.Replace(lines[i], `"surfaceOp":"append" `, `"surfaceOp":"append"`, 1)
	}
	// A balanced range from the first node (balanced before it).
	var ends []int
	for k := range surface {
		if balanced[k] && (k+1 == len(surface) || true) {
			ends = append(ends, k)
		}
	}
	k := ends[len(ends)-1-rng.IntN((len(ends)+1)/2)] // mostly long ranges: a framed summary is ~100 tokens
	c := compactCase{Name: name, Lines: lines, Start: surface[0], End: surface[k], Provider: "deepseek", Model: "deepseek-chat", Time: 5000}
	for range 1 + rng.IntN(3) {
		c.Summary = append(c.Summary, json.RawMessage(`{"type":"text","text":`+quote(pick(rng, []string{"short", "Σ 🙂 \u2028", ""}))+`}`))
	}
	if rng.IntN(6) == 0 {
		c.Summary = append(c.Summary, json.RawMessage(`{"type":"text","text":`+quote(strings.Repeat("a summary far too long to be smaller ", 30))+`}`))
	}
	if rng.IntN(2) == 0 {
		m := int64(rng.IntN(9000) + 1)
		c.MaxTokens = &m
	}
	switch rng.IntN(8) {
	case 0:
		f := "the model refused"
		c.Fail = &f
	case 1:
		f := ""
		c.Fail = &f
	}
	return c
}

var _ = event.TypeUserMessage
