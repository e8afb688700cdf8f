package importer

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/session"
)

// Finding is one rule a line of a harness's log breaks (IMP-2 to IMP-5),
// or a rule of this library an imported event breaks, with the line of
// the file it comes from (1-based; 0 when it concerns the whole file).
// It is an error matchable with errors.Is against its code.
type Finding struct {
	Line   int
	Code   event.Code
	Detail string
}

func (f Finding) Error() string {
	if f.Line == 0 {
		return fmt.Sprintf("%s: %s", f.Code, f.Detail)
	}
	return fmt.Sprintf("line %d: %s: %s", f.Line, f.Code, f.Detail)
}

// Is matches the finding's code.
func (f Finding) Is(target error) bool {
	c, ok := target.(event.Code)
	return ok && c == f.Code
}

// Findingf is a finding at line.
func Findingf(line int, code event.Code, format string, args ...any) Finding {
	return Finding{Line: line, Code: code, Detail: fmt.Sprintf(format, args...)}
}

// Sort orders findings by line, then code.
func Sort(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		if a.Code < b.Code {
			return -1
		}
		if a.Code > b.Code {
			return 1
		}
		return 0
	})
}

// Log is an imported session: its header, its events, and the line of the
// input each event comes from.
type Log struct {
	Header persist.Header
	Events []event.Event
	// Lines[seq] is the 1-based line of the input the event at seq comes
	// from (the line that completes it, for an event several lines make).
	Lines []int
	// Notes are what the import kept aside and says so: lines of kinds it
	// does not know (kept as ignorable records), a torn last line.
	Notes []Finding
	// Kept counts the lines kept as ignorable records, by their kind.
	Kept map[string]int
	// Mapped counts the lines that became messages, by their kind.
	Mapped map[string]int
}

// LineOf is the line an error of this library's rules names, through its
// seq: 0 when it names none.
func (l *Log) LineOf(err error) int {
	var ee *event.Error
	if errors.As(err, &ee) && ee.Seq >= 0 && ee.Seq < int64(len(l.Lines)) {
		return l.Lines[ee.Seq]
	}
	return 0
}

// CheckStrict seeds a session with the imported events in strict mode
// (STRICT-8), as a resume with session.WithStrict() would, and returns the
// first rule broken as a finding at its line, or nil.
func (l *Log) CheckStrict() *Finding {
	_, err := session.Seed(l.Events, session.WithStrict())
	if err == nil {
		return nil
	}
	f := Finding{Line: l.LineOf(err), Code: event.CodeOf(err), Detail: err.Error()}
	return &f
}

// Line is one line of a harness's JSONL file.
type Line struct {
	N   int             // 1-based line number
	Raw json.RawMessage // the line without its newline; nil for a blank line
	// Valid says the line is a JSON object (syntax only); Raw is then
	// compact JSON.
	Valid bool
}

// ReadLines reads a JSONL file into lines. A last line without its
// newline that is not valid JSON is torn (a crash while the harness wrote
// it): it is returned apart, as its length, and is not among the lines.
func ReadLines(r io.Reader) (lines []Line, torn int, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	for n := 1; ; n++ {
		b, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, 0, err
		}
		if len(b) == 0 && err == io.EOF {
			return lines, 0, nil
		}
		complete := bytes.HasSuffix(b, []byte("\n"))
		b = bytes.TrimRight(b, "\r\n")
		if len(bytes.TrimSpace(b)) == 0 {
			lines = append(lines, Line{N: n})
		} else {
			valid := json.Valid(b) && bytes.TrimSpace(b)[0] == '{'
			if !complete && !valid {
				return lines, len(b), nil
			}
			raw := slices.Clone(b)
			if valid {
				// The scanners of package event read compact JSON only.
				var c bytes.Buffer
				json.Compact(&c, b)
				raw = c.Bytes()
			}
			lines = append(lines, Line{N: n, Raw: raw, Valid: valid})
		}
		if err == io.EOF {
			return lines, 0, nil
		}
	}
}

// Millis parses an RFC 3339 timestamp into epoch milliseconds; 0 when it
// is not one.
func Millis(ts string) int64 {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// Builder appends the events of an import to a session (in loose mode:
// the strict rules are checked afterwards, by CheckStrict, so that an
// import shows every harness finding first), keeping the line of each
// event, the open turn and step, and a pending replace that the next
// surface event carries.
type Builder struct {
	S      *session.Session
	Record event.Type // the type of the ignorable records of lines with no place
	Kept   map[string]int
	Mapped map[string]int

	lines []int
	line  int
	now   int64

	turn     int64
	turnOpen bool
	step     int64
	stepOpen bool

	replace *replaceSpec
}

type replaceSpec struct {
	start int64
	nodes []int64
}

// NewBuilder is a builder whose records have type record.
func NewBuilder(record event.Type) *Builder {
	b := &Builder{Record: record, Kept: map[string]int{}, Mapped: map[string]int{}}
	b.S = session.New(session.WithClock(func() int64 { return b.now }))
	return b
}

// At sets the line (and its time, epoch ms) the next events come from.
func (b *Builder) At(line int, millis int64) {
	b.line = line
	if millis > 0 {
		b.now = millis
	}
}

// Line is the current line.
func (b *Builder) Line() int { return b.line }

func (b *Builder) fail(err error) error {
	if err == nil {
		return nil
	}
	return Finding{Line: b.line, Code: event.CodeOf(err), Detail: err.Error()}
}

func (b *Builder) appended(err error) error {
	if err != nil {
		return b.fail(err)
	}
	b.lines = append(b.lines, b.line)
	return nil
}

// Keep appends the line as an ignorable record of kind kind: a line with
// no place among the messages, kept so that nothing is dropped.
func (b *Builder) Keep(kind string, raw json.RawMessage) error {
	data, _ := json.Marshal(struct {
		Line   int             `json:"line"`
		Kind   string          `json:"kind"`
		Record json.RawMessage `json:"record"`
	}{b.line, kind, raw})
	_, err := b.S.AppendEvent(context.Background(), event.Event{Type: b.Record, Seq: int64(b.S.Len()), Time: b.now, Data: data, Ignorable: true})
	if err == nil {
		b.Kept[kind]++
	}
	return b.appended(err)
}

// Mapped notes a line of kind kind that became a message.
func (b *Builder) Map(kind string) { b.Mapped[kind]++ }

// Turn is the open turn's number, and whether one is open.
func (b *Builder) Turn() (int64, bool) { return b.turn, b.turnOpen }

// Step is the open step's number, and whether one is open.
func (b *Builder) Step() (int64, bool) { return b.step, b.stepOpen }

// StartTurn opens the next turn with trigger kind kind.
func (b *Builder) StartTurn(kind string) error {
	b.turn++
	b.step = 0
	_, err := b.S.Append(context.Background(), event.TurnStartData{Turn: b.turn, Trigger: kindJSON(kind)})
	b.turnOpen = err == nil
	return b.appended(err)
}

// EndTurn closes the open turn (and its step) with reason kind.
func (b *Builder) EndTurn(kind string) error {
	if !b.turnOpen {
		return nil
	}
	if err := b.EndStep(); err != nil {
		return err
	}
	_, err := b.S.Append(context.Background(), event.TurnEndData{Turn: b.turn, Reason: kindJSON(kind)})
	b.turnOpen = false
	return b.appended(err)
}

// StartStep opens the next step of the open turn (opening a turn
// triggered by injection when none is open).
func (b *Builder) StartStep() error {
	if !b.turnOpen {
		if err := b.StartTurn("injection"); err != nil {
			return err
		}
	}
	if err := b.EndStep(); err != nil {
		return err
	}
	b.step++
	_, err := b.S.Append(context.Background(), event.StepStartData{Turn: b.turn, Step: b.step})
	b.stepOpen = err == nil
	return b.appended(err)
}

// EndStep closes the open step, if any.
func (b *Builder) EndStep() error {
	if !b.stepOpen {
		return nil
	}
	_, err := b.S.Append(context.Background(), event.StepEndData{Turn: b.turn, Step: b.step})
	b.stepOpen = false
	return b.appended(err)
}

func kindJSON(kind string) json.RawMessage {
	k, _ := json.Marshal(kind)
	return json.RawMessage(`{"kind":` + string(k) + `}`)
}

// Surface appends a surface event: at the tail, with sources, or as the
// pending replace when one is set (ReplaceFrom), whose shadowed nodes join
// its sources. It returns the new event's seq.
func (b *Builder) Surface(data event.Data, sources ...int64) (int64, error) {
	intent := event.AppendIntent(sources...)
	if r := b.replace; r != nil {
		b.replace = nil
		all := append(slices.Clone(r.nodes), sources...)
		slices.Sort(all)
		all = slices.Compact(all)
		intent = event.ReplaceIntent(r.start, r.nodes[len(r.nodes)-1], all...)
	}
	e, err := b.S.Append(context.Background(), data, intent)
	if err := b.appended(err); err != nil {
		return -1, err
	}
	return e.Seq, nil
}

// ReplaceFrom makes the next surface event replace the surface from the
// node start to the tail. Nothing happens when start is not on the
// surface.
func (b *Builder) ReplaceFrom(start int64) {
	i, ok := b.S.Position(start)
	if !ok {
		return
	}
	sf := b.S.Surface()
	nodes := make([]int64, 0, sf.Len()-i)
	for j := i; j < sf.Len(); j++ {
		nodes = append(nodes, sf.At(j))
	}
	b.replace = &replaceSpec{start: start, nodes: nodes}
}

// ReplaceAll makes the next surface event replace the whole surface (when
// it is not empty).
func (b *Builder) ReplaceAll() {
	if sf := b.S.Surface(); sf.Len() > 0 {
		b.ReplaceFrom(sf.At(0))
	}
}

// ReplacePending says a replace waits for its node.
func (b *Builder) ReplacePending() bool { return b.replace != nil }

// Flush gives a pending replace its node: an assistant/message with no
// content, which derives no message (the shadowed nodes leave the
// messages, nothing takes their place).
func (b *Builder) Flush() error {
	if b.replace == nil {
		return nil
	}
	if !b.stepOpen {
		if err := b.StartStep(); err != nil {
			return err
		}
	}
	_, err := b.Surface(event.AssistantMessageData{Turn: b.turn, Step: b.step, Content: []json.RawMessage{}})
	return err
}

// Log is the imported log: the header given, the events, their lines.
func (b *Builder) Log(h persist.Header) *Log {
	events := b.S.Events()
	out := make([]event.Event, len(events))
	for i := range events {
		out[i] = events[i].Clone()
	}
	return &Log{Header: h, Events: out, Lines: slices.Clone(b.lines), Kept: b.Kept, Mapped: b.Mapped}
}

// AnswerPending answers the calls still waiting (pending: call id → the
// seq of the node that made it), before a user-side message, with the
// result the harness itself gives them at its next request, marked
// synthetic by meta(id): in the order of their calls (ties by id), in the
// open step (opening one if none is). The harness never writes these
// results; a provider refuses a call without one.
func (b *Builder) AnswerPending(pending map[string]int64, text string, meta func(id string) json.RawMessage) error {
	if len(pending) == 0 {
		return nil
	}
	ids := make([]string, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(x, y string) int {
		if pending[x] != pending[y] {
			return cmp.Compare(pending[x], pending[y])
		}
		return strings.Compare(x, y)
	})
	if !b.stepOpen {
		if err := b.StartStep(); err != nil {
			return err
		}
	}
	for _, id := range ids {
		if _, err := b.Surface(event.ToolResultData{Turn: b.turn, Step: b.step, CallID: id, Content: event.Text(text), IsError: true, Meta: meta(id)}, pending[id]); err != nil {
			return err
		}
	}
	return nil
}
