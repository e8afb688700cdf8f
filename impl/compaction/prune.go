package compaction

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/observe"
	"github.com/surfacelog/surface/impl/session"
)

// PruneResult is what a prune appended.
type PruneResult struct {
	// RecordSeq and ReplaceSeq are the seqs of the compaction/prune record
	// and of the replacing tool/result.
	RecordSeq, ReplaceSeq int64
	// TokenCount is the shadowedTokenCount recorded: the estimate of the
	// pruned node's message.
	TokenCount int
}

// PruneToolResult replaces the tool/result node seq by one with the same
// data except content (COMP-7): it appends, with nothing in between, the
// compaction/prune record and a tool/result that replaces exactly that
// node, keeping its callId and every other member byte for byte, with
// sourceEventSeqs [seq]. The tool call stays paired with a result. A seq
// that is not a tool/result on the surface is compaction.not_prunable.
func PruneToolResult(s *session.Session, seq int64, content []json.RawMessage, opts ...Option) (res PruneResult, err error) {
	var start time.Time
	var before int
	if obs := s.Observer(); obs != nil {
		start, before = time.Now(), s.Tokens()
		defer func() {
			obs.Prune(context.Background(), observe.Prune{Timing: observe.Since(start), Seq: seq, TokensBefore: before, TokensAfter: s.Tokens(), Err: err})
		}()
	}
	o := optionsOf(opts)
	t := trackerOf(s)
	t.mu.Lock()
	defer t.mu.Unlock()
	_, err = s.AppendBatch(context.Background(), func(tx session.Tx) ([]session.Draft, error) {
		t.sync(tx)
		if t.held {
			return nil, heldErr()
		}
		log := tx.Events()
		if !onSurface(tx, seq) || log[seq].Type != event.TypeToolResult {
			return nil, event.Errorf(event.CodeCompactionNotPrunable, -1, "%d is not a tool/result on the surface", seq)
		}
		old := &log[seq]
		if m, ok := message.FromEvent(old); ok {
			res.TokenCount = o.estimate(m)
		}
		data := withContent(old.Data, content)
		if err := checkData(event.TypeToolResult, data); err != nil {
			return nil, err // nothing appended
		}
		res.RecordSeq, res.ReplaceSeq = int64(tx.Len()), int64(tx.Len())+1
		n := strconv.FormatInt(seq, 10)
		record := `{"shadowedRange":{"start":` + n + `,"end":` + n + `},"shadowedSeqs":[` + n + `],"shadowedTokenCount":` + strconv.Itoa(res.TokenCount) + `}`
		return []session.Draft{
			{Type: event.TypeCompactionPrune, Data: json.RawMessage(record)},
			{Type: event.TypeToolResult, Data: data, Intent: &event.Intent{Op: event.Replace(seq, seq), Sources: []int64{seq}}},
		}, nil
	})
	t.sync2(s)
	if err != nil {
		return PruneResult{}, err
	}
	return res, nil
}

// withContent returns the compact JSON object data with the value of its
// member "content" replaced by content; every other member keeps its bytes
// and its place.
func withContent(data []byte, content []json.RawMessage) json.RawMessage {
	old, _ := event.ObjectMember(data, "content") // a tool/result's data has it (SURF-5)
	i := indexOf(data, old)
	out := make([]byte, 0, len(data))
	out = append(out, data[:i]...)
	out = appendBlocks(out, content)
	return append(out, data[i+len(old):]...)
}

// indexOf returns the offset of sub within b, where sub shares b's memory.
func indexOf(b, sub []byte) int {
	for i := range b {
		if &b[i] == &sub[0] {
			return i
		}
	}
	return -1
}
