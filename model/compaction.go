package model

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
)

// The compaction rules (COMP-1 to COMP-8), computed plainly: every question
// is answered by a fresh derive of the whole log.

// Op is a compaction begun on a model session and not yet finished.
type Op struct {
	StartSeq   int64
	Start, End int64
	Shadowed   []int64
	TokenCount int
	V2         bool   // the compaction/* vocabulary
	ID         string // its compactionId
	Turn       string // the start event's turn (a number, or null)
	Finished   bool
}

// Tokens is the default estimate of a message (COMP-5): its content
// blocks' bytes over four, rounded up.
func Tokens(m message.Message) int {
	n := 0
	for _, b := range m.Content {
		n += len(b)
	}
	return (n + 3) / 4
}

// pendingBefore returns, for each position of the surface and one more
// (after the tail), the number of tool calls made before that cut and not
// answered before it (COMP-4).
func pendingBefore(log []event.Event, surface []int64) []int {
	out := []int{0}
	var open []string
	for _, seq := range surface {
		var d struct {
			Content []struct {
				Type string          `json:"type"`
				ID   json.RawMessage `json:"id"`
			} `json:"content"`
			CallID *string `json:"callId"`
		}
		_ = json.Unmarshal(log[seq].Data, &d)
		switch log[seq].Type {
		case event.TypeAssistantMessage:
			for _, b := range d.Content {
				var id string
				if b.Type == "tool-call" && json.Unmarshal(b.ID, &id) == nil {
					open = append(open, id)
				}
			}
		case event.TypeToolResult:
			if d.CallID != nil {
				if i := slices.Index(open, *d.CallID); i >= 0 {
					open = slices.Delete(open, i, i+1)
				}
			}
		}
		out = append(out, len(open))
	}
	return out
}

// openTurn returns the number of the open turn, or "" when none is open.
func openTurn(log []event.Event) string {
	turn := ""
	for _, e := range log {
		switch e.Type {
		case event.TypeTurnStart:
			var d struct{ Turn json.RawMessage }
			_ = json.Unmarshal(e.Data, &d)
			turn = string(d.Turn)
		case event.TypeTurnEnd:
			turn = ""
		}
	}
	return turn
}

func compErr(code event.Code, format string, args ...any) *event.Error {
	return event.Errorf(code, -1, format, args...)
}

// Begin begins a compaction of [start, end] (COMP-3): it checks the
// range, the pairing (snapping it inward when snap is set), the lock and
// the turn, in that order, and appends the start event.
func (s *Session) Begin(start, end int64, snap, v2 bool, id string) (*Op, error) {
	st := s.derive()
	i, j := slices.Index(st.Surface, start), slices.Index(st.Surface, end)
	switch {
	case i < 0:
		return nil, compErr(event.CodeReplaceStartNotOnSurface, "start %d", start)
	case j < 0:
		return nil, compErr(event.CodeReplaceEndNotOnSurface, "end %d", end)
	case i > j:
		return nil, compErr(event.CodeReplaceReversed, "start after end")
	}
	pend := pendingBefore(st.Log, st.Surface)
	if pend[i] != 0 || pend[j+1] != 0 {
		if !snap {
			return nil, compErr(event.CodeCompactionUnbalanced, "unbalanced")
		}
		for i <= j && pend[i] != 0 {
			i++
		}
		for j >= i && pend[j+1] != 0 {
			j--
		}
		if i > j {
			return nil, compErr(event.CodeCompactionNothingToCompact, "nothing left")
		}
	}
	if _, open := openCompaction(st.Log); open {
		return nil, compErr(event.CodeCompactionLocked, "locked")
	}
	turn := openTurn(st.Log)
	if !v2 && turn == "" {
		return nil, compErr(event.CodeCompactionNoTurn, "no turn")
	}
	op := &Op{StartSeq: int64(len(st.Log)), Start: st.Surface[i], End: st.Surface[j], Shadowed: slices.Clone(st.Surface[i : j+1]), V2: v2, Turn: turn}
	for _, m := range st.Messages {
		if slices.Contains(op.Shadowed, m.Seq) {
			op.TokenCount += Tokens(m)
		}
	}
	var data string
	if v2 {
		if op.Turn == "" {
			op.Turn = "null"
		}
		op.ID = id
		if op.ID == "" {
			op.ID = fmt.Sprintf("c%d", op.StartSeq)
		}
		data = fmt.Sprintf(`{"compactionId":%s,"turn":%s}`, jsString(op.ID), op.Turn)
	} else {
		data = fmt.Sprintf(`{"turn":%s}`, op.Turn)
	}
	if _, err := s.Append(startType(v2), json.RawMessage(data), nil); err != nil {
		return nil, err
	}
	return op, nil
}

func startType(v2 bool) event.Type {
	if v2 {
		return event.TypeCompactionStart
	}
	return event.TypeCompactStart
}

// endData is the end event of op, with errText when not "".
func (op *Op) endData(errText string) (event.Type, string) {
	tail := "}"
	if errText != "" {
		tail = fmt.Sprintf(`,"error":%s}`, jsString(errText))
	}
	if op.V2 {
		return event.TypeCompactionEnd, fmt.Sprintf(`{"compactionId":%s,"turn":%s`, jsString(op.ID), op.Turn) + tail
	}
	return event.TypeCompactEnd, fmt.Sprintf(`{"turn":%s`, op.Turn) + tail
}

// Commit commits op with the summary blocks (COMP-5).
func (s *Session) Commit(op *Op, summary []json.RawMessage, provider, model string, maxTokens *int64) ([]event.Event, error) {
	if op.Finished || openStartSeq(s.log) != op.StartSeq {
		op.Finished = true
		return nil, compErr(event.CodeCompactionFinished, "finished")
	}
	if why := summaryInvalid(summary); why != "" {
		return nil, compErr(event.CodeCompactionSummaryInvalid, "%s", why)
	}
	blocks := "[" + joinRaw(summary) + "]"
	seqs := make([]string, len(op.Shadowed))
	for k, q := range op.Shadowed {
		seqs[k] = fmt.Sprint(q)
	}
	id := ""
	if op.V2 {
		id = fmt.Sprintf(`"compactionId":%s,`, jsString(op.ID))
	}
	max := ""
	if maxTokens != nil {
		max = fmt.Sprintf(`,"maxTokens":%d`, *maxTokens)
	}
	record := fmt.Sprintf(`{%s"summary":%s,"shadowedRange":{"start":%d,"end":%d},"shadowedSeqs":[%s],"shadowedTokenCount":%d,"provider":%s,"model":%s%s}`,
		id, blocks, op.Start, op.End, strings.Join(seqs, ","), op.TokenCount, jsString(provider), jsString(model), max)
	summaryType := event.TypeCompactSummary
	if op.V2 {
		summaryType = event.TypeCompactionSummary
	}
	// A record that could not be appended is refused before anything is.
	if _, err := Derive([]event.Event{{Type: summaryType, Data: json.RawMessage(record)}}); err != nil {
		err.(*event.Error).Index = -1
		return nil, err
	}
	op.Finished = true
	st := s.derive()
	i := slices.Index(st.Surface, op.Shadowed[0])
	if i < 0 || i+len(op.Shadowed) > len(st.Surface) || !slices.Equal(st.Surface[i:i+len(op.Shadowed)], op.Shadowed) {
		t, d := op.endData(string(event.CodeCompactionRangeChanged))
		if _, err := s.Append(t, json.RawMessage(d), nil); err != nil {
			return nil, err
		}
		return nil, compErr(event.CodeCompactionRangeChanged, "range changed")
	}
	var out []event.Event
	rec, err := s.Append(summaryType, json.RawMessage(record), nil)
	if err != nil {
		return nil, err
	}
	out = append(out, rec)
	sources := append([]int64{op.StartSeq, rec.Seq}, op.Shadowed...)
	msg := fmt.Sprintf(`{"content":%s,"source":{"kind":"plugin","plugin":"compact"}}`, blocks)
	rep, err := s.Append(event.TypeUserMessage, json.RawMessage(msg), &event.Intent{Op: event.Replace(op.Start, op.End), Sources: sources})
	if err != nil {
		return out, err
	}
	out = append(out, rep)
	t, d := op.endData("")
	end, err := s.Append(t, json.RawMessage(d), nil)
	if err != nil {
		return out, err
	}
	return append(out, end), nil
}

// openStartSeq is the seq of the start event of the open compaction of
// log (COMP-2), or -1 when none is open.
func openStartSeq(log []event.Event) int64 {
	if _, open := openCompaction(log); !open {
		return -1
	}
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Type == event.TypeCompactStart || log[i].Type == event.TypeCompactionStart {
			return int64(i)
		}
	}
	return -1
}

// summaryInvalid says why providers would refuse summary in a user
// message (COMP-9), or "".
func summaryInvalid(summary []json.RawMessage) string {
	if len(summary) == 0 {
		return "empty"
	}
	for _, b := range summary {
		var blk map[string]any
		if json.Unmarshal(b, &blk) != nil {
			return "not an object"
		}
		switch blk["type"] {
		case "text":
			if _, ok := blk["text"].(string); !ok {
				return "a text block without a string text"
			}
		case "image":
		default:
			return fmt.Sprintf("a block of type %v", blk["type"])
		}
	}
	return ""
}

// Abort aborts op with reason (COMP-6).
func (s *Session) Abort(op *Op, reason string) ([]event.Event, error) {
	if op.Finished || openStartSeq(s.log) != op.StartSeq {
		op.Finished = true
		return nil, compErr(event.CodeCompactionFinished, "finished")
	}
	op.Finished = true
	if reason == "" {
		reason = "aborted"
	}
	t, d := op.endData(reason)
	e, err := s.Append(t, json.RawMessage(d), nil)
	if err != nil {
		return nil, err
	}
	return []event.Event{e}, nil
}

// Prune prunes the tool result node q to content (COMP-7).
func (s *Session) Prune(q int64, content []json.RawMessage) ([]event.Event, error) {
	st := s.derive()
	if !slices.Contains(st.Surface, q) || st.Log[q].Type != event.TypeToolResult {
		return nil, compErr(event.CodeCompactionNotPrunable, "not prunable")
	}
	tokens := 0
	for _, m := range st.Messages {
		if m.Seq == q {
			tokens = Tokens(m)
		}
	}
	record := fmt.Sprintf(`{"shadowedRange":{"start":%d,"end":%d},"shadowedSeqs":[%d],"shadowedTokenCount":%d}`, q, q, q, tokens)
	// The data with the content member's value replaced, everything else
	// as it was: walk the members, keeping their bytes.
	data := st.Log[q].Data
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.Token() // {
	var b strings.Builder
	b.WriteString("{")
	for first := true; dec.More(); first = false {
		from := int(dec.InputOffset())
		k, _ := dec.Token()
		to := int(dec.InputOffset())
		key := strings.TrimLeft(string(data[from:to]), ", ")
		var v json.RawMessage
		_ = dec.Decode(&v)
		if !first {
			b.WriteString(",")
		}
		b.WriteString(key + ":")
		if k == "content" {
			b.WriteString("[" + joinRaw(content) + "]")
		} else {
			b.Write(v)
		}
	}
	b.WriteString("}")
	// A replacement that could not be appended is refused before anything is.
	if _, err := Derive([]event.Event{{Type: event.TypeToolResult, Data: json.RawMessage(b.String()), Op: event.Append()}}); err != nil {
		err.(*event.Error).Index = -1
		return nil, err
	}
	rec, err := s.Append(event.TypeCompactionPrune, json.RawMessage(record), nil)
	if err != nil {
		return nil, err
	}
	rep, err := s.Append(event.TypeToolResult, json.RawMessage(b.String()), &event.Intent{Op: event.Replace(q, q), Sources: []int64{q}})
	if err != nil {
		return []event.Event{rec}, err
	}
	return []event.Event{rec, rep}, nil
}

// Select proposes a compaction range keeping the last keepLast nodes, or
// (keepLast < 0) the shortest tail of at least keepTokens estimated
// tokens (COMP-8).
func (s *Session) Select(keepLast, keepTokens int) (int64, int64, error) {
	st := s.derive()
	n := len(st.Surface)
	keep := 0
	if keepLast >= 0 {
		keep = max(n-keepLast, 0)
	} else {
		total := 0
		tokens := map[int64]int{}
		for _, m := range st.Messages {
			tokens[m.Seq] = Tokens(m)
		}
		for i := n - 1; i >= 0; i-- {
			total += tokens[st.Surface[i]]
			if total >= keepTokens {
				keep = i
				break
			}
		}
	}
	pend := pendingBefore(st.Log, st.Surface)
	for keep > 0 && pend[keep] != 0 {
		keep--
	}
	if keep == 0 {
		return 0, 0, compErr(event.CodeCompactionNothingToCompact, "nothing")
	}
	return st.Surface[0], st.Surface[keep-1], nil
}

// Balanced reports whether the cut before (after false) or after node seq
// is balanced (COMP-4); ok is false when seq is not on the surface.
func (s *Session) Balanced(seq int64, after bool) (balanced, ok bool) {
	st := s.derive()
	i := slices.Index(st.Surface, seq)
	if i < 0 {
		return false, false
	}
	if after {
		i++
	}
	return pendingBefore(st.Log, st.Surface)[i] == 0, true
}

func joinRaw(blocks []json.RawMessage) string {
	parts := make([]string, len(blocks))
	for k, b := range blocks {
		parts[k] = string(b)
	}
	return strings.Join(parts, ",")
}
