package event

import (
	"bytes"
	"encoding/json"
	"slices"
)

// MaxSafeInteger is the largest integer that an IEEE-754 double holds exactly
// (2^53-1). Seqs, times, replace endpoints and integer data stay within it so
// that a JavaScript reader sees the same values (SURF-1, SURF-4).
const MaxSafeInteger = 1<<53 - 1

// Type names an event type of the catalog, e.g. "user/message".
type Type string

// Event is one entry of a session log.
//
// Events handed out by a session share memory with its log: treat Data and
// Sources as read-only, and use Clone for a copy you may change.
type Event struct {
	// Type is the event type (SURF-3).
	Type Type
	// Seq is the event's index in its log (SURF-2).
	Seq int64
	// Time is the event's time in epoch milliseconds.
	Time int64
	// Data is the event's payload as compact JSON text (SURF-4, SURF-5).
	Data json.RawMessage
	// Sources are the sourceEventSeqs: the seqs this event was built from.
	// nil means absent (provenance not recorded); a non-nil empty slice is a
	// present, empty list, allowed only on assistant/message (SURF-9).
	Sources []int64
	// Op is the surfaceOp marker; the zero value means absent (SURF-7).
	Op SurfaceOp
	// Ignorable is the envelope member "ignorable": true. A reader that
	// does not know the event's type keeps an ignorable event (it never
	// enters the surface or the messages) and rejects an unknown type
	// without it (SURF-3). On a known type it changes nothing.
	Ignorable bool
}

// Clone returns a deep copy of e.
func (e Event) Clone() Event {
	e.Data = slices.Clone(e.Data)
	if e.Sources != nil {
		e.Sources = append(make([]int64, 0, len(e.Sources)), e.Sources...)
	}
	return e
}

// OpKind says how an event enters the surface.
type OpKind uint8

const (
	// OpNone means the event carries no surfaceOp marker.
	OpNone OpKind = iota
	// OpAppend adds the event at the surface tail (SURF-10).
	OpAppend
	// OpReplace replaces the inclusive range [Start, End] of surface nodes
	// by the event (SURF-11).
	OpReplace
	// OpMalformed is a marker that is neither "append" nor an object; the
	// JSON decoder produces it so that the rejection is reported in check
	// order (SURF-8, SURF-16).
	OpMalformed
	// OpMalformedReplace is an object marker that is not exactly
	// {op:"replace", start, end} with valid endpoints (SURF-8).
	OpMalformedReplace
)

// SurfaceOp is the surfaceOp marker of an event.
type SurfaceOp struct {
	Kind OpKind
	// Start and End are the inclusive replace range, as node seqs; they are
	// meaningful only when Kind is OpReplace.
	Start, End int64
}

// Append returns the marker that adds an event at the surface tail.
func Append() SurfaceOp { return SurfaceOp{Kind: OpAppend} }

// Replace returns the marker that replaces the surface nodes from start
// through end (both inclusive, in surface order) by the event.
func Replace(start, end int64) SurfaceOp {
	return SurfaceOp{Kind: OpReplace, Start: start, End: end}
}

// IsZero reports whether the marker is absent.
func (op SurfaceOp) IsZero() bool { return op.Kind == OpNone }

// Intent is how a surface-eligible event enters the surface and what it was
// built from: the RFC's SurfaceIntent.
type Intent struct {
	// Op is the surface marker. The zero value is "no marker" and is
	// rejected with surface.op_missing (SURF-7).
	Op SurfaceOp
	// Sources are the sourceEventSeqs; nil means absent (SURF-9).
	Sources []int64
}

// Value is the intent p points to, or the zero Intent (no marker) when p
// is nil: for code that holds an optional intent as a pointer, to pass it
// to session.Session.Append, which takes the zero Intent as none.
func (p *Intent) Value() Intent {
	if p == nil {
		return Intent{}
	}
	return *p
}

// Data is what session.Session.Append appends: the data of one event,
// whose Go type names the event's type. Every catalog type has its struct
// (TurnStartData, UserMessageData, ...); Raw carries any type, as JSON text
// or a Go value, for the open vocabulary (SURF-3) and for data already
// encoded.
type Data interface {
	// EventType is the type of the event the data belongs to.
	EventType() Type
}

// Raw is the data of an event of type Type, given as JSON text
// (json.RawMessage or []byte) or as any value encoding/json can marshal:
// for types registered in a Vocabulary, and for data that is already JSON.
// The data is checked against the type's schema when appended, as the
// typed structs' is.
type Raw struct {
	Type Type
	Data any
}

// EventType is r.Type.
func (r Raw) EventType() Type { return r.Type }

// Text is a content list of one text block holding s: the content of a
// prompt, a tool's result or an answer that is plain text.
func Text(s string) []json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{"text", s})
	return []json.RawMessage{bytes.TrimSuffix(b.Bytes(), []byte("\n"))}
}

// AppendIntent is Intent{Op: Append(), Sources: sources}.
func AppendIntent(sources ...int64) Intent {
	return Intent{Op: Append(), Sources: sources}
}

// ReplaceIntent is Intent{Op: Replace(start, end), Sources: sources}.
func ReplaceIntent(start, end int64, sources ...int64) Intent {
	if sources == nil {
		sources = []int64{}
	}
	return Intent{Op: Replace(start, end), Sources: sources}
}
