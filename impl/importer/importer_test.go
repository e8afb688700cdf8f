package importer

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/surfacelog/surface/impl/event"
)

// TestSortIsByLineThenCodeAndStable: findings ordered by line, then code;
// findings equal in both keep the order they were found in (their details
// differ), whichever way round the codes and lines come.
func TestSortIsByLineThenCodeAndStable(t *testing.T) {
	a, b := event.Code("import.a"), event.Code("import.b")
	in := []Finding{
		{Line: 3, Code: b, Detail: "3b first"},
		{Line: 3, Code: a, Detail: "3a first"},
		{Line: 1, Code: b, Detail: "1b"},
		{Line: 3, Code: b, Detail: "3b second"},
		{Line: 3, Code: a, Detail: "3a second"},
		{Line: 2, Code: a, Detail: "2a"},
		{Line: 3, Code: b, Detail: "3b third"},
	}
	fs := slices.Clone(in)
	Sort(fs)
	var got []string
	for _, f := range fs {
		got = append(got, f.Detail)
	}
	want := []string{"1b", "2a", "3a first", "3a second", "3b first", "3b second", "3b third"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sorted: %v\nwant    %v", got, want)
	}
}

// TestAtKeepsTheLastTime: a line without a time (0 or below) keeps the
// time of the line before it; a line with one sets it.
func TestAtKeepsTheLastTime(t *testing.T) {
	b := NewBuilder("x/record")
	for _, c := range []struct {
		line        int
		millis, now int64
	}{{1, 5, 5}, {2, 0, 5}, {3, -1, 5}, {4, 1, 1}, {5, 0, 1}} {
		b.At(c.line, c.millis)
		if b.Line() != c.line || b.now != c.now {
			t.Errorf("At(%d, %d): line %d, time %d; want time %d", c.line, c.millis, b.Line(), b.now, c.now)
		}
	}
}

// TestLineOfEverySeq: an error names the line of its seq, the first event
// included; a seq outside the log, no seq, or an error of another kind
// names none.
func TestLineOfEverySeq(t *testing.T) {
	l := &Log{Lines: []int{7, 9, 12}}
	for seq, want := range map[int64]int{0: 7, 1: 9, 2: 12, 3: 0, -1: 0} {
		if got := l.LineOf(event.Errorf(event.CodeDataInvalid, seq, "x")); got != want {
			t.Errorf("seq %d: line %d, want %d", seq, got, want)
		}
	}
	if got := l.LineOf(fmt.Errorf("wrapped: %w", event.Errorf(event.CodeDataInvalid, 1, "x"))); got != 9 {
		t.Errorf("a wrapped error: line %d", got)
	}
	if got := l.LineOf(fmt.Errorf("plain")); got != 0 {
		t.Errorf("an error of another kind: line %d", got)
	}
}

// TestBuilderOpensWhatIsMissing: a step started with no turn open opens
// one (triggered by injection); pending calls answered with no step open
// open one, and are answered in the order of their calls' seqs, ids
// breaking ties; a surface append the session refuses returns seq -1.
func TestBuilderOpensWhatIsMissing(t *testing.T) {
	b := NewBuilder("x/record")
	b.At(1, 1000)
	if err := b.StartStep(); err != nil {
		t.Fatal(err)
	}
	if turn, open := b.Turn(); !open || turn != 1 {
		t.Fatalf("turn %d open %v after StartStep with none open", turn, open)
	}
	if step, open := b.Step(); !open || step != 1 {
		t.Fatalf("step %d open %v", step, open)
	}
	if err := b.EndStep(); err != nil {
		t.Fatal(err)
	}
	if err := b.AnswerPending(map[string]int64{"b": 1, "a": 5, "c": 1, "d": 0}, "lost", func(string) json.RawMessage { return nil }); err != nil {
		t.Fatal(err)
	}
	var types []string
	var answered []string
	for _, e := range b.S.Events() {
		types = append(types, string(e.Type))
		if e.Type == event.TypeToolResult {
			answered = append(answered, event.StringMember(e.Data, "callId"))
		}
	}
	wantTypes := "[turn/start step/start step/end step/start tool/result tool/result tool/result tool/result]"
	if fmt.Sprint(types) != wantTypes {
		t.Errorf("events %v\nwant   %s", types, wantTypes)
	}
	if fmt.Sprint(answered) != "[d b c a]" {
		t.Errorf("answered %v, want [d b c a] (by the call's seq, then id)", answered)
	}
	if seq, err := b.Surface(event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(`{}`)}); err == nil || seq != -1 {
		t.Errorf("a refused surface append: seq %d, err %v", seq, err)
	}
}
