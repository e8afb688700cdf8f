package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// store is a write-ahead that records the size of every write, and can be
// told to fail or to block the next batch (a write of several events).
type store struct {
	mu      sync.Mutex
	writes  []int
	events  []event.Event
	fail    error         // fail every batch with it
	block   chan struct{} // closed by the test to let a blocked batch go on
	inBatch chan struct{} // closed when a batch write has begun
}

func (st *store) write(ctx context.Context, events []event.Event) error {
	st.mu.Lock()
	st.writes = append(st.writes, len(events))
	fail, block, in := st.fail, st.block, st.inBatch
	st.mu.Unlock()
	if len(events) > 1 {
		if in != nil {
			close(in)
		}
		if block != nil {
			<-block
		}
		if fail != nil {
			return fail
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, e := range events {
		st.events = append(st.events, e.Clone())
	}
	return nil
}

const (
	userData    = `{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`
	turnOne     = `{"turn":1,"trigger":{"kind":"message"}}`
	turnEndData = `{"turn":1,"reason":{"kind":"completed"}}`
)

// openTurn is a session (through st) with an open turn and one prompt:
// turn/start 0, user/message 1.
func openTurn(t *testing.T, st *store, opts ...session.Option) *session.Session {
	t.Helper()
	s := session.New(append(opts, session.WithWriteAhead(st.write))...)
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: json.RawMessage(turnOne)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(userData)}, event.Intent{Op: event.Append()}); err != nil {
		t.Fatal(err)
	}
	return s
}

// replaceAndEnd is a batch that replaces the prompt (node 1) and ends the
// turn: two events the surface and the ledger both fold.
func replaceAndEnd(session.Tx) ([]session.Draft, error) {
	return []session.Draft{
		{Type: event.TypeUserMessage, Data: json.RawMessage(`{"content":[{"type":"text","text":"summary"}],"source":{"kind":"user"}}`), Intent: &event.Intent{Op: event.Replace(1, 1), Sources: []int64{1}}},
		{Type: event.TypeTurnEnd, Data: json.RawMessage(turnEndData)},
	}, nil
}

// state is everything a reader can see of a session.
type state struct {
	Len      int
	Surface  []int64
	Messages int
	Tokens   int
	Turn     int64
	Open     bool
	Position bool
}

func stateOf(s *session.Session) state {
	turn, open := s.OpenTurn()
	_, pos := s.Position(1)
	return state{Len: s.Len(), Surface: s.Surface().Slice(), Messages: s.Messages().Len(), Tokens: s.Tokens(), Turn: turn, Open: open, Position: pos}
}

// TestBatchIsOneWrite: the events of a batch, and the closers of a repair,
// reach the store in one write (STORE-17); single appends in one each.
func TestBatchIsOneWrite(t *testing.T) {
	st := &store{}
	s := openTurn(t, st)
	if _, err := s.AppendBatch(context.Background(), replaceAndEnd); err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 1, 2}; !slices.Equal(st.writes, want) {
		t.Fatalf("writes %v, want %v", st.writes, want)
	}
	// A repair's closers: a turn with two pending calls gets three
	// closers (two results and the end), written at once.
	st2 := &store{}
	r := openTurn(t, st2)
	calls := `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"a","name":"read","arguments":{}},{"type":"tool-call","id":"b","name":"read","arguments":{}}]}`
	if _, err := r.Append(context.Background(), event.Raw{Type: event.TypeAssistantMessage, Data: json.RawMessage(calls)}, event.Intent{Op: event.Append()}); err != nil {
		t.Fatal(err)
	}
	closers, err := r.Repair(context.Background())
	if err != nil || len(closers) != 3 {
		t.Fatalf("repair: %d closers, %v", len(closers), err)
	}
	if want := []int{1, 1, 1, 3}; !slices.Equal(st2.writes, want) {
		t.Fatalf("writes %v, want %v", st2.writes, want)
	}
	if !slices.EqualFunc(st2.events, r.Events(), func(a, b event.Event) bool { return a.Seq == b.Seq && string(a.Data) == string(b.Data) }) {
		t.Fatal("the store and the session disagree")
	}
}

// TestFailedBatchChangesNothing: a batch whose write fails appends none
// of its events, and the session is exactly as before: what readers see,
// the bookkeeping (strict mode's ledger included), and the surface, which
// had folded the batch ahead of the log and is rebuilt. The session goes
// on as a session seeded with its log would.
func TestFailedBatchChangesNothing(t *testing.T) {
	for _, strict := range []bool{false, true} {
		var opts []session.Option
		if strict {
			opts = append(opts, session.WithStrict())
		}
		st := &store{fail: errors.New("disk full")}
		s := openTurn(t, st, opts...)
		before := stateOf(s)
		out, err := s.AppendBatch(context.Background(), replaceAndEnd)
		if err == nil || len(out) != 0 {
			t.Fatalf("strict=%v: a failed batch returned %d events, %v", strict, len(out), err)
		}
		if diff := cmp.Diff(before, stateOf(s)); diff != "" {
			t.Fatalf("strict=%v: the failed batch changed the session (-before +after):\n%s", strict, diff)
		}
		// The same batch, written this time, and more appends: the
		// session matches one seeded with its log.
		st.fail = nil
		if _, err := s.AppendBatch(context.Background(), replaceAndEnd); err != nil {
			t.Fatalf("strict=%v: %v", strict, err)
		}
		if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: json.RawMessage(`{"turn":2,"trigger":{"kind":"message"}}`)}); err != nil {
			t.Fatalf("strict=%v: %v", strict, err)
		}
		seeded, err := session.Seed(s.Events(), opts...)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(stateOf(seeded), stateOf(s)); diff != "" {
			t.Fatalf("strict=%v: differs from a seeded session (-seeded +session):\n%s", strict, diff)
		}
		if len(st.events) != s.Len() {
			t.Fatalf("strict=%v: the store holds %d events, the session %d", strict, len(st.events), s.Len())
		}
	}
}

// TestReadersDuringBatchWrite: while a batch is being written, readers
// see the session as it was before the batch, though the surface has
// folded the batch already: the replaced node is still on the surface and
// has its position, the turn is still open.
func TestReadersDuringBatchWrite(t *testing.T) {
	st := &store{block: make(chan struct{}), inBatch: make(chan struct{})}
	s := openTurn(t, st, session.WithStrict())
	before := stateOf(s)
	done := make(chan error, 1)
	go func() {
		_, err := s.AppendBatch(context.Background(), replaceAndEnd)
		done <- err
	}()
	<-st.inBatch
	seen := make(chan state, 1)
	go func() { seen <- stateOf(s) }()
	select {
	case got := <-seen:
		if diff := cmp.Diff(before, got); diff != "" {
			t.Fatalf("a reader saw the batch being written (-before +during):\n%s", diff)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a reader waited for the batch's write")
	}
	close(st.block)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	after := stateOf(s)
	if after.Open || after.Position || after.Len != 4 {
		t.Fatalf("after the batch: %+v", after)
	}
}

// TestAppendContext: an append whose context has ended is refused with
// persist.cancelled (wrapping the context's error) before anything is
// written; AppendBatch and Repair alike.
func TestAppendContext(t *testing.T) {
	st := &store{}
	s := openTurn(t, st)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Append(ctx, event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(userData)}, event.Intent{Op: event.Append()})
	if !errors.Is(err, event.CodePersistCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Append: %v", err)
	}
	if _, err := s.AppendBatch(ctx, replaceAndEnd); !errors.Is(err, event.CodePersistCancelled) {
		t.Fatalf("AppendBatch: %v", err)
	}
	if _, err := s.Repair(ctx); !errors.Is(err, event.CodePersistCancelled) {
		t.Fatalf("Repair: %v", err)
	}
	if s.Len() != 2 || len(st.writes) != 2 {
		t.Fatalf("a cancelled append wrote: %d events, %d writes", s.Len(), len(st.writes))
	}
	dl, cancel2 := context.WithTimeout(context.Background(), -time.Second)
	defer cancel2()
	if _, err := s.Append(dl, event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(userData)}, event.Intent{Op: event.Append()}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("past deadline: %v", err)
	}
}
