package conformance

import (
	"encoding/json"

	"github.com/surfacelog/surface/impl/released"
	"github.com/surfacelog/surface/model"
)

// FeatureReleased is the released_open step: a released seed system's
// session file (plain JSONL or .jsonl.zstd) handed to the testee to read
// and check by the released rules (spec §13, REL-1 to REL-5).
const FeatureReleased = "released"

// releasedOpen reads a released file with the implementation (impl) or
// the model, and answers what it holds: the number of events, the torn
// bytes, the surface and the identified messages.
func releasedOpen(s Step, impl bool) (Result, error) {
	if s.File == nil {
		return Result{}, protocolError("released_open without fileBase64")
	}
	var surface []int64
	var msgs []json.RawMessage
	var events, torn int
	if impl {
		l, err := released.Read(*s.File)
		if err != nil {
			return Result{}, err
		}
		checked, err := released.Check(l)
		if err != nil {
			return Result{}, err
		}
		surface, msgs, events, torn = checked.Surface, checked.Messages, len(checked.Events), l.TornBytes
	} else {
		r, err := model.OpenReleased(*s.File)
		if err != nil {
			return Result{}, err
		}
		surface, msgs, events, torn = r.Surface, r.Messages, r.Events, r.TornBytes
	}
	if surface == nil {
		surface = []int64{}
	}
	if msgs == nil {
		msgs = []json.RawMessage{}
	}
	b, err := json.Marshal(msgs)
	if err != nil {
		return Result{}, err
	}
	return Result{Report: &StoreReport{Events: events, TornBytes: torn}, Surface: &surface, Messages: b}, nil
}
