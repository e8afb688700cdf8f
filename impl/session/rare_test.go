package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/observe"
	"github.com/surfacelog/surface/impl/session"
)

// Values the state machines never draw, each beside its look-alike: a
// seed past one and two progress marks and one exactly on a mark, a batch
// of no drafts, a batch whose draft cannot be marshalled first, second or
// third, a batch that answers a held steering message beside one refused
// before it answers, and a batch that waits for another writer.

// TestSeedProgressMarks: Seed and SeedJSON report every 65,536 events
// and once at the end, the same marks for both; a log that ends on a
// mark reports it twice (the mark, then the end).
func TestSeedProgressMarks(t *testing.T) {
	const mark = 65536
	for _, n := range []int{0, 5, mark, 2*mark + 5} {
		events := make([]event.Event, n)
		lines := make([]json.RawMessage, n)
		for i := range events {
			events[i] = event.Event{Type: event.TypeTodoWrite, Seq: int64(i), Time: 1, Data: json.RawMessage(`{"todos":[]}`)}
			lines[i], _ = json.Marshal(events[i])
		}
		var want [][2]int
		for done := mark; done <= n; done += mark {
			want = append(want, [2]int{done, n})
		}
		want = append(want, [2]int{n, n})
		for _, seed := range []string{"Seed", "SeedJSON"} {
			var got [][2]int
			progress := session.WithSeedProgress(func(done, total int) { got = append(got, [2]int{done, total}) })
			var err error
			if seed == "Seed" {
				_, err = session.Seed(events, progress)
			} else {
				_, err = session.SeedJSON(lines, progress)
			}
			if err != nil {
				t.Fatalf("%s of %d: %v", seed, n, err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s of %d: progress %v, want %v", seed, n, got, want)
			}
		}
	}
}

// TestBatchRareShapes: a batch of no drafts appends nothing, fails
// nothing and reports nothing; a draft whose data cannot be marshalled
// stops the batch at its seq, whichever draft it is, with the drafts
// before it appended and one record saying so.
func TestBatchRareShapes(t *testing.T) {
	var rec observe.Recorder
	s := session.New(session.WithObserver(&rec))
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: json.RawMessage(turnOne)}); err != nil {
		t.Fatal(err)
	}
	out, err := s.AppendBatch(context.Background(), func(session.Tx) ([]session.Draft, error) { return nil, nil })
	if err != nil || len(out) != 0 || s.Len() != 1 || len(rec.Appends) != 1 {
		t.Fatalf("empty batch: %d events, %v, log %d, %d records", len(out), err, s.Len(), len(rec.Appends))
	}
	todo := session.Draft{Type: event.TypeTodoWrite, Data: json.RawMessage(`{"todos":[]}`)}
	bad := session.Draft{Type: event.TypeTodoWrite, Data: map[string]any{"todos": make(chan int)}}
	for k := range 3 {
		base := s.Len()
		records := len(rec.Appends)
		drafts := append(slices.Repeat([]session.Draft{todo}, k), bad, todo)
		out, err := s.AppendBatch(context.Background(), func(session.Tx) ([]session.Draft, error) { return drafts, nil })
		var ee *event.Error
		if !errors.As(err, &ee) || ee.Seq != int64(base+k) || len(out) != k || s.Len() != base+k {
			t.Fatalf("bad draft %d: %d events, %v (seq %v), log %d (was %d)", k, len(out), err, ee, s.Len(), base)
		}
		if len(rec.Appends) != records+1 {
			t.Fatalf("bad draft %d: %d records", k, len(rec.Appends)-records)
		}
		if r := rec.Appends[len(rec.Appends)-1]; r.Type != event.TypeTodoWrite || r.Seq != int64(base) || r.Events != k || r.Err == nil {
			t.Fatalf("bad draft %d: record %+v", k, r)
		}
	}
}

// TestBatchReleasesHeldSteering: a steering message held while a call is
// pending is appended right after the batch that answers the call; a batch
// refused at its first draft leaves it held.
func TestBatchReleasesHeldSteering(t *testing.T) {
	s := session.New()
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	ap := event.AppendIntent()
	for _, a := range []struct {
		ty   event.Type
		data string
	}{
		{event.TypeTurnStart, turnOne},
		{event.TypeUserMessage, userData},
		{event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"a","name":"read","arguments":{}}]}`},
	} {
		var intent []event.Intent
		if a.ty != event.TypeTurnStart {
			intent = []event.Intent{ap}
		}
		if _, err := s.Append(context.Background(), event.Raw{Type: a.ty, Data: raw(a.data)}, intent...); err != nil {
			t.Fatal(err)
		}
	}
	if _, now, err := s.SteerWhenBalanced(raw(`{"turn":1,"content":[{"type":"text","text":"also"}],"source":{"kind":"user"}}`)); err != nil || now {
		t.Fatalf("held: now %v, %v", now, err)
	}
	result := session.Draft{Type: event.TypeToolResult, Data: raw(`{"turn":1,"step":1,"callId":"a","content":[],"isError":false}`), Intent: &ap}
	refused := session.Draft{Type: event.TypeToolResult, Data: raw(`{"turn":1,"step":1,"callId":"a","content":[],"isError":false}`)} // no marker
	before := s.Len()
	if _, err := s.AppendBatch(context.Background(), func(session.Tx) ([]session.Draft, error) { return []session.Draft{refused}, nil }); err == nil || s.Len() != before {
		t.Fatalf("refused batch: %v, log %d (was %d)", err, s.Len(), before)
	}
	out, err := s.AppendBatch(context.Background(), func(session.Tx) ([]session.Draft, error) { return []session.Draft{result}, nil })
	if err != nil || len(out) != 1 {
		t.Fatal(err)
	}
	events := s.Events()
	if len(events) != before+2 || events[before].Type != event.TypeToolResult || events[before+1].Type != event.TypeSteeringMessage {
		t.Fatalf("after the answering batch: %d events (was %d), last %v", len(events), before, events[len(events)-1].Type)
	}
}

// TestBatchLockWaitObserved: a batch that waits for another writer's
// store write reports the wait.
func TestBatchLockWaitObserved(t *testing.T) {
	var rec observe.Recorder
	s, done := writerInFlight(&rec)
	if _, err := s.AppendBatch(context.Background(), func(session.Tx) ([]session.Draft, error) {
		return []session.Draft{{Type: event.TypeTodoWrite, Data: json.RawMessage(`{"todos":[]}`)}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rec.Appends, func(a observe.Append) bool { return a.Type == event.TypeTodoWrite })
	if len(rec.Appends) != 2 || i < 0 || rec.Appends[i].LockWait <= 0 {
		t.Fatalf("records %+v", rec.Appends)
	}
}

// TestAppendRefusedBeforeASeq: an append refused before it has a seq (no
// data, a nil *event.Raw, two intents, data that cannot be marshalled)
// fails with seq -1 in its error and in its record, never a seq of the
// log; the record names the type when there is one.
func TestAppendRefusedBeforeASeq(t *testing.T) {
	var rec observe.Recorder
	s := session.New(session.WithObserver(&rec))
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: json.RawMessage(turnOne)}); err != nil {
		t.Fatal(err)
	}
	var nilRaw *event.Raw
	cases := []struct {
		name string
		data event.Data
		in   []event.Intent
		code event.Code
		ty   event.Type
	}{
		{"nil data", nil, nil, event.CodeDataInvalid, ""},
		{"nil *event.Raw", nilRaw, nil, event.CodeDataInvalid, ""},
		{"two intents", event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(userData)}, []event.Intent{event.AppendIntent(), event.AppendIntent()}, event.CodeOpInvalid, event.TypeUserMessage},
		{"data that cannot be marshalled", event.Raw{Type: event.TypeTodoWrite, Data: map[string]any{"todos": func() {}}}, nil, "", event.TypeTodoWrite},
	}
	for _, c := range cases {
		_, err := s.Append(context.Background(), c.data, c.in...)
		var ee *event.Error
		if !errors.As(err, &ee) || ee.Seq != -1 || (c.code != "" && ee.Code != c.code) {
			t.Errorf("%s: %v (seq %v)", c.name, err, ee)
			continue
		}
		r := rec.Appends[len(rec.Appends)-1]
		if r.Seq != -1 || r.Type != c.ty || r.Err == nil || r.Events != 0 {
			t.Errorf("%s: record %+v", c.name, r)
		}
	}
	if s.Len() != 1 || len(rec.Appends) != 1+len(cases) {
		t.Fatalf("log %d, %d records", s.Len(), len(rec.Appends))
	}
}

// TestAppendEventRareValues: AppendEvent keeps its own copy of the
// sources it is given (the caller may reuse the slice) and refuses a
// given seq of -1 as out of range (only Append assigns seqs), beside a
// seq past the log's end and one already taken.
func TestAppendEventRareValues(t *testing.T) {
	s := session.New()
	for _, e := range []event.Event{
		{Type: event.TypeTurnStart, Seq: 0, Time: 1, Data: json.RawMessage(turnOne)},
		{Type: event.TypeUserMessage, Seq: 1, Time: 1, Data: json.RawMessage(userData), Op: event.Append()},
	} {
		if _, err := s.AppendEvent(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	sources := []int64{1}
	if _, err := s.AppendEvent(context.Background(), event.Event{Type: event.TypeUserMessage, Seq: 2, Time: 1, Data: json.RawMessage(userData), Op: event.Replace(1, 1), Sources: sources}); err != nil {
		t.Fatal(err)
	}
	sources[0] = 0
	if got := s.Events()[2].Sources; len(got) != 1 || got[0] != 1 {
		t.Fatalf("the stored sources follow the caller's slice: %v", got)
	}
	if p, err := s.Provenance(2); err != nil || !slices.Equal(p, []int64{1}) {
		t.Fatalf("provenance %v, %v", p, err)
	}
	for seq, code := range map[int64]event.Code{-1: event.CodeInvalidEnvelope, 4: event.CodeSeqNotContiguous, 2: event.CodeSeqNotContiguous} {
		_, err := s.AppendEvent(context.Background(), event.Event{Type: event.TypeTodoWrite, Seq: seq, Time: 1, Data: json.RawMessage(`{"todos":[]}`)})
		if !errors.Is(err, code) || s.Len() != 3 {
			t.Errorf("seq %d: %v, log %d", seq, err, s.Len())
		}
	}
}

// TestAppendAndRepairTimed: an append that waits for another writer's
// store write reports the wait; a repair's record has its start.
func TestAppendAndRepairTimed(t *testing.T) {
	var rec observe.Recorder
	s, done := writerInFlight(&rec)
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: json.RawMessage(`{"todos":[]}`)}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rec.Appends, func(a observe.Append) bool { return a.Type == event.TypeTodoWrite })
	if i < 0 || rec.Appends[i].LockWait <= 0 {
		t.Fatalf("records %+v", rec.Appends)
	}
	if _, err := s.Repair(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(rec.Repairs) != 1 || rec.Repairs[0].Start.IsZero() || rec.Repairs[0].Closers != 1 {
		t.Fatalf("repair records %+v", rec.Repairs)
	}
}

// TestCancelledError: the error of an ended context carries the seq it
// is given and no seed index; a live context gives none.
func TestCancelledError(t *testing.T) {
	if err := session.Cancelled(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, seq := range []int64{-1, 0, 7} {
		var ee *event.Error
		if err := session.Cancelled(ctx, seq); !errors.As(err, &ee) || ee.Code != event.CodePersistCancelled || ee.Seq != seq || ee.Index != -1 || !errors.Is(err, context.Canceled) {
			t.Errorf("seq %d: %v %+v", seq, err, ee)
		}
	}
}

// TestTraceOfABatch: a traced batch writes one line per event, each with
// the surface just after it, the replace's line before the turn end's.
func TestTraceOfABatch(t *testing.T) {
	var buf bytes.Buffer
	s := session.New(session.WithTrace(&buf))
	for _, a := range []struct {
		ty     event.Type
		data   string
		intent []event.Intent
	}{{event.TypeTurnStart, turnOne, nil}, {event.TypeUserMessage, userData, []event.Intent{event.AppendIntent()}}} {
		if _, err := s.Append(context.Background(), event.Raw{Type: a.ty, Data: json.RawMessage(a.data)}, a.intent...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AppendBatch(context.Background(), replaceAndEnd); err != nil {
		t.Fatal(err)
	}
	var lines []session.TraceLine
	for _, l := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var tl session.TraceLine
		if err := json.Unmarshal(l, &tl); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, tl)
	}
	if len(lines) != 4 {
		t.Fatalf("%d trace lines: %s", len(lines), buf.String())
	}
	if !slices.Equal(lines[1].Surface, []int64{1}) || lines[2].Op != "replace" || !slices.Equal(lines[2].Surface, []int64{2}) || !slices.Equal(lines[3].Surface, []int64{2}) {
		t.Fatalf("trace: %s", buf.String())
	}
}

// TestBookkeepingRareValues: the open turn and step, the next turn and a
// turn's end, with no turn, a turn numbered 7 then 3 (numbers are the
// log's, not a count), a number written 2.0 (JSON reads it as 2), a step
// outside any turn, and a turn ended twice (the last end counts).
func TestBookkeepingRareValues(t *testing.T) {
	s := session.New()
	if turn, open := s.OpenTurn(); open || turn != 0 {
		t.Fatalf("no turn: %d %v", turn, open)
	}
	if step, open := s.OpenStep(); open || step != 0 {
		t.Fatalf("no step: %d %v", step, open)
	}
	if n := s.NextTurn(); n != 1 {
		t.Fatalf("next turn of a new log: %d", n)
	}
	if _, ok := s.TurnEnd(1); ok {
		t.Fatal("a turn end in an empty log")
	}
	add := func(ty event.Type, data string, intent ...event.Intent) {
		t.Helper()
		if _, err := s.Append(context.Background(), event.Raw{Type: ty, Data: json.RawMessage(data)}, intent...); err != nil {
			t.Fatalf("%s %s: %v", ty, data, err)
		}
	}
	add(event.TypeTurnStart, `{"turn":7,"trigger":{"kind":"message"}}`)
	add(event.TypeUserMessage, userData, event.AppendIntent())
	add(event.TypeStepStart, `{"turn":7,"step":2.0}`)
	add(event.TypeAssistantMessage, `{"turn":7,"step":2.0,"content":[]}`, event.AppendIntent())
	if turn, open := s.OpenTurn(); !open || turn != 7 {
		t.Fatalf("turn 7: %d %v", turn, open)
	}
	if step, open := s.OpenStep(); !open || step != 2 {
		t.Fatalf("step 2.0: %d %v", step, open)
	}
	add(event.TypeTurnEnd, `{"turn":7,"reason":{"kind":"completed"}}`)
	if turn, open := s.OpenTurn(); open || turn != 0 {
		t.Fatalf("after turn 7's end: %d %v", turn, open)
	}
	if step, open := s.OpenStep(); open {
		t.Fatalf("a step outside any turn: %d", step)
	}
	add(event.TypeTurnStart, `{"turn":3,"trigger":{"kind":"message"}}`)
	if n := s.NextTurn(); n != 8 {
		t.Fatalf("next turn after 7 and 3: %d", n)
	}
	add(event.TypeTurnEnd, `{"turn":3.0,"reason":{"kind":"completed"}}`)
	first, ok := s.TurnEnd(7)
	if !ok || first.Seq != 4 {
		t.Fatalf("turn 7's end: %+v %v", first, ok)
	}
	if e, ok := s.TurnEnd(3); !ok || e.Seq != 6 {
		t.Fatalf("turn 3.0's end: %+v %v", e, ok)
	}
	if _, ok := s.TurnEnd(4); ok {
		t.Fatal("a turn that never ran has an end")
	}
	add(event.TypeTurnEnd, `{"turn":3,"reason":{"kind":"aborted"}}`)
	if e, ok := s.TurnEnd(3); !ok || e.Seq != 7 {
		t.Fatalf("turn 3 ended twice: %+v %v", e, ok)
	}
}

// TestStrictTurnNumbers: strict mode compares turn numbers by value: the
// same number written the same way (0, 9, -1, the fast path) or another
// way (1 and 1.0, 1e0 and 1, 10 and 1e1) is the open turn; another value is
// not, and steering outside any turn says so.
func TestStrictTurnNumbers(t *testing.T) {
	for _, c := range []struct {
		start, msg string
		want       event.Code
	}{
		{"0", "0", ""}, {"9", "9", ""}, {"-1", "-1", ""}, {"1", "1.0", ""}, {"1e0", "1", ""}, {"10", "1e1", ""},
		{"1", "2", event.CodeStrictWrongTurn}, {"-1", "1", event.CodeStrictWrongTurn}, {"9", "90", event.CodeStrictWrongTurn}, {"1", "1e1", event.CodeStrictWrongTurn},
	} {
		s := session.New(session.WithStrict())
		if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: json.RawMessage(`{"turn":` + c.start + `,"trigger":{"kind":"message"}}`)}); err != nil {
			t.Fatal(err)
		}
		_, err := s.Append(context.Background(), event.Raw{Type: event.TypeAssistantMessage, Data: json.RawMessage(`{"turn":` + c.msg + `,"step":1,"content":[]}`)}, event.AppendIntent())
		if event.CodeOf(err) != c.want {
			t.Errorf("turn %s, message of turn %s: %v, want %q", c.start, c.msg, err, c.want)
		}
		steer := `{"turn":` + c.msg + `,"content":[{"type":"text","text":"s"}],"source":{"kind":"user"}}`
		want := c.want
		if want != "" {
			want = event.CodeStrictNoTurn
		}
		if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeSteeringMessage, Data: json.RawMessage(steer)}, event.AppendIntent()); event.CodeOf(err) != want {
			t.Errorf("turn %s, steering of turn %s: %v, want %q", c.start, c.msg, err, want)
		}
	}
	s := session.New(session.WithStrict())
	_, err := s.Append(context.Background(), event.Raw{Type: event.TypeSteeringMessage, Data: json.RawMessage(`{"turn":1,"content":[{"type":"text","text":"s"}],"source":{"kind":"user"}}`)}, event.AppendIntent())
	if event.CodeOf(err) != event.CodeStrictNoTurn || !strings.Contains(err.Error(), "the open turn is none") {
		t.Errorf("steering outside any turn: %v", err)
	}
}

// writerInFlight returns a session observed by rec whose first append (a
// turn/start, in a goroutine) is inside its store write, which lasts 5 ms
// more: an append made now waits for it. done receives that append's
// error.
func writerInFlight(rec *observe.Recorder) (*session.Session, chan error) {
	inWrite := make(chan struct{})
	first := true
	write := func(context.Context, []event.Event) error {
		if first {
			first = false
			close(inWrite)
			time.Sleep(5 * time.Millisecond)
		}
		return nil
	}
	s := session.New(session.WithObserver(rec), session.WithWriteAhead(write))
	done := make(chan error, 1)
	go func() {
		_, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: json.RawMessage(turnOne)})
		done <- err
	}()
	<-inWrite
	return s, done
}
