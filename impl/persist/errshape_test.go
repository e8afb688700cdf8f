package persist

import (
	"errors"

	"github.com/surfacelog/surface/impl/event"
)

// isErr reports whether err has code and names seq as its offending
// event (-1: none), with no seed index: the whole shape a caller reads,
// not the code alone. A store's refusals of a session, a file or a schema
// (locked, not a session, a schema version) name no event; a conflict
// names the event that was not written.
func isErr(err error, code event.Code, seq int64) bool {
	var e *event.Error
	return errors.Is(err, code) && errors.As(err, &e) && e.Seq == seq && e.Index == -1
}
