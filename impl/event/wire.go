package event

import (
	"encoding/json"
)

// arena hands out the memory for event data: compact data is written
// straight into large chunks, so a decoded log costs one copy of its data
// and few allocations. Every slice handed out has its capacity clipped to
// its length, so an append to one never writes into another.
type arena struct {
	chunk   []byte   // free space of the current chunk (length 0)
	members []member // scratch for the members of the event being decoded
}

const arenaChunk = 64 << 10

// reserve returns an empty slice with room for n bytes.
func (a *arena) reserve(n int) []byte {
	if cap(a.chunk) < n {
		if n > arenaChunk/4 {
			return make([]byte, 0, n) // a big value gets memory of its own
		}
		a.chunk = make([]byte, 0, arenaChunk)
	}
	return a.chunk[:0:n]
}

// commit keeps the first len(b) bytes of the last reservation, which b
// holds, and returns b clipped.
func (a *arena) commit(b []byte) []byte {
	if cap(a.chunk) > 0 && len(b) > 0 && &a.chunk[:1][0] == &b[:1][0] {
		a.chunk = a.chunk[len(b):len(b):cap(a.chunk)]
	}
	return b[:len(b):len(b)]
}

// copy returns a copy of b in the arena.
func (a *arena) copy(b []byte) []byte {
	return a.commit(append(a.reserve(len(b)), b...))
}

// Log is a log decoded from the wire form of its events by a Decoder. Each
// event's data was checked against SURF-3 to SURF-5 and compacted in the
// same scan that decoded it; Check reports, per event, every rule in the
// order of SURF-16 without scanning data that passed again. A session
// seeded from a Log (session.SeedLog) takes its events without a copy.
// Treat the events as read-only.
type Log struct {
	events  []Event
	checked []uint64 // bit i: the data of event i passed SURF-3 to SURF-5
}

// Events returns the decoded events; they share memory with the Log.
func (l *Log) Events() []Event {
	if l == nil {
		return nil
	}
	return l.events
}

// Len is the number of events.
func (l *Log) Len() int {
	if l == nil {
		return 0
	}
	return len(l.events)
}

// Check checks event i as the candidate at index wantSeq of a log, with
// every event-local rule in order, like Vocabulary.Check; data that passed
// SURF-4 and SURF-5 when it was decoded is not scanned again.
func (l *Log) Check(v *Vocabulary, i int, wantSeq int64) *Error {
	checked := l.checked[i/64]&(1<<(i%64)) != 0
	return v.check(&l.events[i], wantSeq, checked)
}

// Decoder decodes the wire form of events into a Log, one scan per event:
// the envelope is read, and the data is checked against SURF-4 and
// compacted into shared memory as it is read (SURF-5 then runs on the
// members found by that scan). A Decoder is not safe for concurrent use.
type Decoder struct {
	arena arena
	log   Log
}

// Decode appends the event of one wire-form line (SURF-1). An envelope
// that is not an event is rejected with event.invalid_envelope and nothing
// is appended; data that breaks SURF-4 or SURF-5 is kept as it was sent,
// to be reported in check order by Log.Check.
func (d *Decoder) Decode(line []byte) error {
	e, ok, err := decodeWire(line, &d.arena)
	if err != nil {
		err.Index = len(d.log.events)
		return err
	}
	d.add(e, ok)
	return nil
}

// DecodeParts appends an event given as the parts of its wire form, as a
// store keeps them in columns: the type, seq and time, the data's JSON
// text, the JSON text of sourceEventSeqs and surfaceOp (nil when absent),
// and the ignorable flag. Markers decode as in Decode (see DecodeMarkers).
func (d *Decoder) DecodeParts(typ []byte, seq, time int64, data, sources, surfaceOp []byte, ignorable bool) {
	e := Event{Type: internType(typ), Seq: seq, Time: time, Ignorable: ignorable}
	e.Op, e.Sources = DecodeMarkers(surfaceOp, sources)
	ok := false
	if end, out, members, why := scanDataInto(data, 0, d.arena.reserve(len(data)), &d.arena.members); why == "" && skipSpace(data, end) == len(data) {
		e.Data = d.arena.commit(out)
		ok = shapeOK(e.Type, e.Data, members)
	} else {
		e.Data = d.arena.copy(data)
	}
	d.add(e, ok)
}

func (d *Decoder) add(e Event, dataOK bool) {
	i := len(d.log.events)
	d.log.events = append(d.log.events, e)
	if i%64 == 0 {
		d.log.checked = append(d.log.checked, 0)
	}
	if dataOK {
		d.log.checked[i/64] |= 1 << (i % 64)
	}
}

// Len is the number of events decoded so far.
func (d *Decoder) Len() int { return len(d.log.events) }

// Grow makes room for n more events, so a caller that knows (or can
// estimate) the size of a log decodes it without copying the events as the
// log grows. Room for an eighth more is added, which a session seeded from
// the Log keeps as headroom for its next appends.
func (d *Decoder) Grow(n int) {
	n += n/8 + 64
	if cap(d.log.events)-len(d.log.events) >= n {
		return
	}
	events := make([]Event, len(d.log.events), len(d.log.events)+n)
	copy(events, d.log.events)
	d.log.events = events
	checked := make([]uint64, len(d.log.checked), (cap(events)+63)/64)
	copy(checked, d.log.checked)
	d.log.checked = checked
}

// Log returns the log decoded so far and starts a new, empty one.
func (d *Decoder) Log() *Log {
	l := d.log
	d.log = Log{}
	return &l
}

// shapeOK reports whether compact, SURF-4-valid data of type t passes
// SURF-3 and SURF-5.
func shapeOK(t Type, data []byte, members []member) bool {
	spec, ok := Lookup(t)
	return ok && checkShape(spec, data, members) == ""
}

// internType returns the catalog's string for a known type (no
// allocation), or a new string.
func internType(b []byte) Type {
	if i, ok := catalogIndex(Type(b)); ok {
		return catalog[i].Type
	}
	return Type(b)
}

// scanDataInto checks the JSON value at in[pos:] against SURF-4 and
// appends its compact form to out, which must have room for the rest of
// in. It returns the index just past the value, the compact text, the
// members of its top-level object, or why it breaks SURF-4.
//
// The members are appended to scratch[:0]: they are valid until the next
// call with the same scratch.
func scanDataInto(in []byte, pos int, out []byte, scratch *[]member) (end int, compact []byte, members []member, why string) {
	// Field by field: a composite literal is built in a temporary and
	// copied in 16-byte moves that stall on its 8-byte stores (11% of a
	// Check, measured).
	var s scanner
	s.in, s.pos, s.out, s.members = in, pos, out, (*scratch)[:0]
	ok := s.value()
	*scratch = s.members // keep what append grew
	if !ok {
		return 0, nil, nil, s.bad
	}
	return s.pos, s.out, s.members, ""
}

// decodeWire decodes one wire-form event in one scan (see Decoder). ok
// reports whether its data passed SURF-3 to SURF-5 and is compact.
func decodeWire(b []byte, a *arena) (e Event, ok bool, err *Error) {
	bad := func(format string, args ...any) (Event, bool, *Error) {
		return Event{}, false, Errorf(CodeInvalidEnvelope, -1, format, args...)
	}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return bad("an event must be a JSON object")
	}
	i = skipSpace(b, i+1)
	const (
		hType = 1 << iota
		hSeq
		hTime
		hData
		hSources
		hOp
		hIgnorable
	)
	have := 0
	var members []member
	dataOK := false
	for i < len(b) && b[i] != '}' {
		kEnd := stringEnd(b, i)
		if b[i] != '"' || kEnd < 0 {
			return bad("an event must be a JSON object")
		}
		key, kok := keyBytes(b[i:kEnd])
		i = skipSpace(b, kEnd)
		if !kok || i >= len(b) || b[i] != ':' {
			return bad("an event must be a JSON object")
		}
		i = skipSpace(b, i+1)
		var bit int
		switch string(key) {
		case "type":
			bit = hType
		case "seq":
			bit = hSeq
		case "time":
			bit = hTime
		case "data":
			bit = hData
		case "sourceEventSeqs":
			bit = hSources
		case "surfaceOp":
			bit = hOp
		case "ignorable":
			bit = hIgnorable
		default:
			if valueEnd(b, i) < 0 {
				return bad("an event must be a JSON object")
			}
			return bad("unknown member %q", string(key))
		}
		if have&bit != 0 {
			return bad("member %q appears twice", key)
		}
		have |= bit
		var end int
		if bit == hData {
			var out []byte
			var why string
			end, out, members, why = scanDataInto(b, i, a.reserve(len(b)-i), &a.members)
			if why == "" {
				e.Data, dataOK = a.commit(out), true
			} else {
				// Kept as sent: Check reports why, in check order.
				if end = valueEnd(b, i); end < 0 {
					return bad("an event must be a JSON object")
				}
				e.Data = a.copy(b[i:end])
			}
		} else {
			if end = valueEnd(b, i); end < 0 {
				return bad("an event must be a JSON object")
			}
			v := b[i:end]
			switch bit {
			case hType:
				s, sok := keyBytes(v)
				if v[0] != '"' || !sok {
					return bad("type must be a string")
				}
				e.Type = internType(s)
			case hSeq:
				if e.Seq, ok = safeInteger(v); !ok {
					return bad("seq must be an integer in [0, 2^53-1]")
				}
			case hTime:
				if e.Time, ok = safeInteger(v); !ok {
					return bad("time must be an integer in [0, 2^53-1]")
				}
			case hSources:
				e.Sources = decodeSources(v)
			case hOp:
				e.Op = decodeOp(v)
			case hIgnorable:
				if string(v) != "true" {
					return bad("ignorable must be true when present")
				}
				e.Ignorable = true
			}
		}
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			if i >= len(b) || b[i] == '}' {
				return bad("an event must be a JSON object")
			}
		} else if i >= len(b) || b[i] != '}' {
			return bad("an event must be a JSON object")
		}
	}
	if i >= len(b) || skipSpace(b, i+1) != len(b) {
		return bad("an event must be one JSON object")
	}
	if have&(hType|hSeq|hTime|hData) != hType|hSeq|hTime|hData {
		return bad("type, seq, time and data are required")
	}
	return e, dataOK && shapeOK(e.Type, e.Data, members), nil
}

// keyBytes returns the value of a JSON string token (with its quotes),
// as encoding/json reads it: escapes resolved, and a byte that is not
// UTF-8 read as U+FFFD, as JSON.parse reads a line decoded as UTF-8 (the
// model reads it so too; the fuzzer found the difference). A plain token
// (plainString) is returned in place, without a copy; the result must
// then not be kept past tok.
func keyBytes(tok []byte) ([]byte, bool) {
	if raw, ok := plainString(tok); ok {
		return raw, true
	}
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return nil, false
	}
	var s string
	if json.Unmarshal(tok, &s) != nil {
		return nil, false
	}
	return []byte(s), true
}

// parseSmallInt parses a plain non-negative integer literal of at most 15
// digits (always exact in a double) without allocating.
func parseSmallInt(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 15 || (len(v) > 1 && v[0] == '0') {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}
