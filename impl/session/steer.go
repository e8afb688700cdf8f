package session

import (
	"context"

	"github.com/surfacelog/surface/impl/event"
)

// held is a steering message waiting for the open turn's calls to be
// answered.
type held struct {
	data []byte
	turn string // the open turn it was given for
}

// SteerWhenBalanced appends a steering message for the open turn where a
// provider accepts it: at once when the open turn has no pending tool
// calls, else right after the append that answers its last pending call,
// as part of that append (so it never lands between a call and its
// result, STRICT-5). appended says whether it was appended now (e is the
// event); a held message is appended later in the order given. A held
// message whose turn ends first is dropped: it was for that turn
// (DroppedSteering counts them). data is the steering/message data;
// intent is always "append". Data that breaks the event rules is refused
// at once.
func (s *Session) SteerWhenBalanced(data any) (e event.Event, appended bool, err error) {
	raw, jerr := event.MarshalData(data)
	if jerr != nil {
		return event.Event{}, false, jerr
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.foldLedger()
	candidate := event.Event{Type: event.TypeSteeringMessage, Seq: int64(s.n()), Time: s.cfg.clock(), Data: raw, Op: event.Append()}
	if s.ledger.Turn() == nil || s.ledger.NumPending() == 0 {
		stored, err := s.commit(context.Background(), candidate)
		return stored, err == nil, err
	}
	// Held: check it now as an append would (its event rules), so a bad
	// message is refused to its caller, not dropped later.
	check := candidate
	if err := s.cfg.vocabulary.Check(&check, check.Seq); err != nil {
		return event.Event{}, false, err
	}
	s.held = append(s.held, held{data: check.Data, turn: string(s.ledger.Turn())})
	return event.Event{}, false, nil
}

// DroppedSteering is the number of held steering messages dropped because
// their turn ended before its calls were answered.
func (s *Session) DroppedSteering() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// releaseHeld appends the held steering messages once the open turn has
// no pending calls, and drops those whose turn is over. The caller holds
// s.wmu and s.mu, after a successful commit.
func (s *Session) releaseHeld(ctx context.Context) {
	if len(s.held) == 0 {
		return
	}
	s.foldLedger()
	turn := string(s.ledger.Turn())
	kept := s.held[:0]
	for _, h := range s.held {
		if h.turn != turn {
			s.dropped++
			continue
		}
		kept = append(kept, h)
	}
	s.held = kept
	if turn == "" || s.ledger.NumPending() > 0 || len(s.held) == 0 {
		return
	}
	pending := s.held
	s.held = nil
	for i, h := range pending {
		e := event.Event{Type: event.TypeSteeringMessage, Seq: int64(s.n()), Time: s.cfg.clock(), Data: h.data, Op: event.Append()}
		if _, err := s.commitOnly(ctx, e); err != nil {
			// The store failed: keep the rest for the next balanced point.
			s.held = append(s.held, pending[i:]...)
			return
		}
	}
}
