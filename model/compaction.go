package model

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

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
	Concurrent bool   // appends between begin and commit allowed (compact/*)
	ID         string // its compactionId
	Turn       string // the start event's turn (a number, or null)
	Finished   bool
}

// Tokens is the estimate of a message (COMP-5): the seed system's token
// meter, 4 for the role plus, per block, ceil(units/4) + 4 where units are
// UTF-16 code units: of the text (text, reasoning); of the name and,
// separately, the arguments' JSON text (tool-call); a tool-result block
// is its content's blocks + 4; any other block is its JSON text as
// JavaScript's JSON.stringify writes it.
func Tokens(m message.Message) int { return meterAll(m.Content) + 4 }

func meterAll(blocks []json.RawMessage) int {
	n := 0
	for _, b := range blocks {
		n += meterOne(b)
	}
	return n
}

func ceil4(n int) int { return (n + 3) / 4 }

func units(s string) int { return len(utf16.Encode([]rune(s))) }

func meterOne(b json.RawMessage) int {
	var d struct {
		Type      string            `json:"type"`
		Text      *string           `json:"text"`
		Name      string            `json:"name"`
		Arguments json.RawMessage   `json:"arguments"`
		Content   []json.RawMessage `json:"content"`
		Native    json.RawMessage   `json:"native"`
	}
	_ = json.Unmarshal(b, &d)
	switch d.Type {
	case "text", "reasoning":
		if d.Text != nil {
			return ceil4(units(*d.Text)) + 4
		}
	case "tool-call":
		var args string
		if json.Unmarshal(d.Arguments, &args) != nil {
			return ceil4(units(d.Name)) + ceil4(jsTextUnits(d.Arguments)) + 4
		}
		return ceil4(units(d.Name)) + ceil4(units(args)) + 4
	case "tool-result":
		return meterAll(d.Content) + 4
	}
	if d.Native != nil { // PROV-7: a provider's item costs its text only
		if d.Text != nil {
			return ceil4(units(*d.Text)) + 4
		}
		return 4
	}
	return ceil4(jsTextUnits(b)) + 4
}

// jsTextUnits is the length, in UTF-16 units, of JSON.stringify(JSON.parse(b)).
func jsTextUnits(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			j := i + 1
			for b[j] != '"' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			n += units(stringifyLiteral(b[i : j+1]))
			i = j + 1
		case c == '-' || c >= '0' && c <= '9':
			j := i
			for j < len(b) && strings.ContainsRune("-+.eE0123456789", rune(b[j])) {
				j++
			}
			f, _ := strconv.ParseFloat(string(b[i:j]), 64)
			n += len(jsNumberText(f))
			i = j
		default:
			n++
			i++
		}
	}
	return n
}

// jsNumberText is Number.prototype.toString of f: fixed notation when
// 1e-6 <= |f| < 1e21 (by its decimal exponent), else d.ddde+x / d.ddde-x, with the shortest digits.
func jsNumberText(f float64) string {
	if f == 0 {
		return "0"
	}
	if f < 0 {
		return "-" + jsNumberText(-f)
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	e, _ := strconv.Atoi(exp)
	if e >= -6 && e < 21 { // 1e-6 is 0.000001, 1e-7 is 1e-7
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	if e > 0 {
		return mant + "e+" + strconv.Itoa(e)
	}
	return mant + "e-" + strconv.Itoa(-e)
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
	return s.BeginItems(start, end, snap, v2, id, false)
}

// BeginItems is Begin, with opaque saying whether the summariser handles
// providers' opaque items (PROV-4). Before the range it checks that the
// provider holds no history (PROV-5); after it, that the range starts
// after the last provider compaction (PROV-4); after the pairing, that it
// holds no opaque item unless allowed.
func (s *Session) BeginItems(start, end int64, snap, v2 bool, id string, opaque bool) (*Op, error) {
	st := s.derive()
	if providerHolds(st.Log) {
		return nil, compErr(event.CodeCompactionProviderHistory, "the provider holds the history")
	}
	i, j := slices.Index(st.Surface, start), slices.Index(st.Surface, end)
	switch {
	case i < 0:
		return nil, compErr(event.CodeReplaceStartNotOnSurface, "start %d", start)
	case j < 0:
		return nil, compErr(event.CodeReplaceEndNotOnSurface, "end %d", end)
	case i > j:
		return nil, compErr(event.CodeReplaceReversed, "start after end")
	case i < providerHead(st):
		return nil, compErr(event.CodeCompactionProviderCompacted, "before a provider compaction")
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
	if !opaque {
		for _, q := range st.Surface[i : j+1] {
			if o, _ := providerItems(st, q); o {
				return nil, compErr(event.CodeCompactionOpaqueItems, "node %d holds an opaque provider item", q)
			}
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

// LogChangedText is the end event's error of a compact/* commit after
// something else was appended (COMP-5), the seed system's text.
const LogChangedText = "compaction: session log changed during summarization"

// preamble and the tags frame a summary in its user/message (COMP-11).
const (
	preamble = "This is an automatically generated checkpoint condensing an earlier span of the conversation to free up context. Treat the captured context as established background and build on it without restating it. Continue the task directly from the messages that follow, without acknowledging this checkpoint."
	openTag  = "<compacted-summary>"
	closeTag = "</compacted-summary>"
)

// Commit commits op with the summary blocks (COMP-5), framed and checked
// for size (COMP-11) unless plain.
func (s *Session) Commit(op *Op, summary []json.RawMessage, provider, model string, maxTokens *int64, plain bool) ([]event.Event, error) {
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
	if !op.V2 && !op.Concurrent && int64(len(s.log)) != op.StartSeq+1 {
		// The seed system's compact/* commit: any append since the start
		// event voids the summary.
		t, d := op.endData(LogChangedText)
		end, err := s.Append(t, json.RawMessage(d), nil)
		if err != nil {
			return nil, err
		}
		return []event.Event{end}, compErr(event.CodeCompactionLogChanged, "log changed")
	}
	st := s.derive()
	i := slices.Index(st.Surface, op.Shadowed[0])
	if i < 0 || i+len(op.Shadowed) > len(st.Surface) || !slices.Equal(st.Surface[i:i+len(op.Shadowed)], op.Shadowed) {
		t, d := op.endData(string(event.CodeCompactionRangeChanged))
		end, err := s.Append(t, json.RawMessage(d), nil)
		if err != nil {
			return nil, err
		}
		return []event.Event{end}, compErr(event.CodeCompactionRangeChanged, "range changed")
	}
	content := summary
	if !plain {
		content = append([]json.RawMessage{json.RawMessage(`{"type":"text","text":` + jsString(preamble+"\n\n"+openTag) + `}`)}, summary...)
		content = append(content, json.RawMessage(`{"type":"text","text":`+jsString(closeTag)+`}`))
		if framed := Tokens(message.Message{Role: message.RoleUser, Content: content}); framed >= op.TokenCount {
			t, d := op.endData(fmt.Sprintf("summary is not smaller than the shadowed content (%d estimated framed tokens >= %d)", framed, op.TokenCount))
			end, err := s.Append(t, json.RawMessage(d), nil)
			if err != nil {
				return nil, err
			}
			return []event.Event{end}, compErr(event.CodeCompactionNotSmaller, "not smaller")
		}
	}
	var out []event.Event
	rec, err := s.Append(summaryType, json.RawMessage(record), nil)
	if err != nil {
		return nil, err
	}
	out = append(out, rec)
	sources := append([]int64{op.StartSeq, rec.Seq}, op.Shadowed...)
	msg := fmt.Sprintf(`{"content":%s,"source":{"kind":"plugin","plugin":"compact"}}`, "["+joinRaw(content)+"]")
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
	if providerHolds(st.Log) {
		return nil, compErr(event.CodeCompactionProviderHistory, "the provider holds the history")
	}
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
	return s.SelectItems(keepLast, keepTokens, false)
}

// SelectItems is Select, with opaque saying whether the range may hold
// providers' opaque items (PROV-4): the range starts after the last
// provider compaction, and without opaque it ends before the first opaque
// item after that.
func (s *Session) SelectItems(keepLast, keepTokens int, opaque bool) (int64, int64, error) {
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
	head := providerHead(st)
	if !opaque {
		for i := head; i < n; i++ {
			if o, _ := providerItems(st, st.Surface[i]); o {
				keep = min(keep, i)
				break
			}
		}
	}
	pend := pendingBefore(st.Log, st.Surface)
	for keep > head && pend[keep] != 0 {
		keep--
	}
	if keep <= head {
		return 0, 0, compErr(event.CodeCompactionNothingToCompact, "nothing")
	}
	return st.Surface[head], st.Surface[keep-1], nil
}

// providerItems reports whether the message of node seq holds, among
// its content blocks, an opaque provider item, and a provider's
// compaction (PROV-1, PROV-3).
func providerItems(st *State, seq int64) (opaque, compaction bool) {
	for _, m := range st.Messages {
		if m.Seq != seq {
			continue
		}
		for _, raw := range m.Content {
			var b struct {
				Type       string `json:"type"`
				Compaction bool   `json:"compaction"`
				Native     *struct {
					Opaque bool `json:"opaque"`
				} `json:"native"`
			}
			if json.Unmarshal(raw, &b) != nil || b.Native == nil {
				continue
			}
			opaque = opaque || b.Native.Opaque
			compaction = compaction || b.Type == "provider-item" && b.Compaction
		}
	}
	return opaque, compaction
}

// providerHead is the surface position after the last surface node that
// is an assistant message holding a provider's compaction, 0 if none.
func providerHead(st *State) int {
	for i := len(st.Surface) - 1; i >= 0; i-- {
		if _, c := providerItems(st, st.Surface[i]); c && st.Log[st.Surface[i]].Type == event.TypeAssistantMessage {
			return i + 1
		}
	}
	return 0
}

// providerHolds reports whether the last assistant/message of log
// records a reply on history its provider holds (PROV-5).
func providerHolds(log []event.Event) bool {
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Type != event.TypeAssistantMessage {
			continue
		}
		var d struct {
			Response struct {
				Conversation       any `json:"conversation"`
				PreviousResponseID any `json:"previousResponseId"`
			} `json:"response"`
		}
		if json.Unmarshal(log[i].Data, &d) != nil {
			return false
		}
		c, _ := d.Response.Conversation.(string)
		p, _ := d.Response.PreviousResponseID.(string)
		return c != "" || p != ""
	}
	return false
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
