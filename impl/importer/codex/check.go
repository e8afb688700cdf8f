package codex

import (
	"encoding/json"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/importer"
)

// Check reports every rule of the rollout format and of Codex's history
// that a line breaks (spec/harnesses.md §1.8; IMP-2, IMP-4), in line
// order: a line that is not a rollout line (a torn last line excepted),
// no session_meta, a call id used twice, a call left without output
// before the next user turn (the last turn's calls excepted: a crash
// leaves them open, and a resume closes them), an output that answers no
// earlier call or a call of another kind, a second output for a call;
// and the same rules inside each compacted line's replacement history.
// It never changes the file.
func Check(f *File) []importer.Finding {
	var out []importer.Finding
	if len(f.Lines) == 0 {
		return []importer.Finding{importer.Findingf(0, event.CodeImportNoSession, "the file holds no line")}
	}
	if _, err := Header(f); err != nil {
		out = append(out, err.(importer.Finding))
	}
	p := newPairing()
	for i := range f.Lines {
		l := &f.Lines[i]
		if l.Problem != "" {
			out = append(out, importer.Findingf(l.N, event.CodeImportLineInvalid, "%s", l.Problem))
			continue
		}
		switch l.Type {
		case KindResponseItem:
			out = p.item(l.N, l.Payload, out)
		case KindCompacted:
			rh, ok := event.ObjectMember(l.Payload, "replacement_history")
			if !ok || string(rh) == "null" {
				continue
			}
			if len(rh) == 0 || rh[0] != '[' {
				out = append(out, importer.Findingf(l.N, event.CodeImportLineInvalid, "replacement_history is not an array"))
				continue
			}
			// Calls the compaction drops unanswered are lost with it.
			out = p.unanswered(l.N, "the compaction replaces the history", out)
			inner := newPairing()
			for _, it := range event.ArrayElements(rh) {
				if len(it) == 0 || it[0] != '{' || str(it, "type") == "" {
					out = append(out, importer.Findingf(l.N, event.CodeImportLineInvalid, "a replacement_history item is not an object with a type"))
					continue
				}
				out = inner.item(l.N, it, out)
			}
			out = inner.unanswered(l.N, "the replacement history ends", out)
			p = inner
		}
	}
	importer.Sort(out)
	return out
}

type callState struct {
	line     int
	kind     string
	answered bool
}

// pairing follows the calls and outputs of one history.
type pairing struct {
	calls map[string]*callState
	order []string
}

func newPairing() *pairing { return &pairing{calls: map[string]*callState{}} }

func (p *pairing) item(line int, it json.RawMessage, out []importer.Finding) []importer.Finding {
	kind := str(it, "type")
	switch {
	case Boundary(it):
		out = p.unanswered(line, "the next user turn begins", out)
	case outputFor[kind] != "":
		id := str(it, "call_id")
		if id == "" {
			return append(out, importer.Findingf(line, event.CodeImportNotImportable, "a %s without call_id cannot be paired with its output", kind))
		}
		if c, ok := p.calls[id]; ok {
			return append(out, importer.Findingf(line, event.CodeImportCallDuplicate, "call id %q is used again (first at line %d)", id, c.line))
		}
		p.calls[id] = &callState{line: line, kind: kind}
		p.order = append(p.order, id)
	case isOutput(kind):
		id := str(it, "call_id")
		c, ok := p.calls[id]
		switch {
		case !ok:
			out = append(out, importer.Findingf(line, event.CodeImportOutputOrphan, "%s for call id %q, which no earlier call made", kind, id))
		case outputFor[c.kind] != kind:
			out = append(out, importer.Findingf(line, event.CodeImportOutputOrphan, "%s answers call %q, a %s (line %d), which takes a %s", kind, id, c.kind, c.line, outputFor[c.kind]))
		case c.answered:
			out = append(out, importer.Findingf(line, event.CodeImportOutputDuplicate, "a second output for call %q (line %d)", id, c.line))
		default:
			c.answered = true
		}
	}
	return out
}

// unanswered reports the calls still without output, once each.
func (p *pairing) unanswered(line int, why string, out []importer.Finding) []importer.Finding {
	kept := p.order[:0]
	for _, id := range p.order {
		c := p.calls[id]
		if c.answered {
			kept = append(kept, id)
			continue
		}
		out = append(out, importer.Findingf(c.line, event.CodeImportCallUnanswered, "call %q (%s) has no output when %s (line %d)", id, c.kind, why, line))
		c.answered = true // reported once
		kept = append(kept, id)
	}
	p.order = kept
	return out
}
