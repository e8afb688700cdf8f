package persist

import (
	"encoding/json"

	"github.com/surfacelog/surface/impl/event"
)

// nullString is NULL for an empty string.
func nullString(v string) any {
	if v == "" {
		return nil
	}
	return v
}

// markerColumns returns the source_event_seqs and surface_op columns of e:
// their wire forms as text, or NULL when absent.
func markerColumns(e *event.Event) (sources, op any) {
	if e.Sources != nil {
		b, _ := json.Marshal(e.Sources)
		sources = string(b)
	}
	if m := event.MarkerJSON(e.Op); m != nil {
		op = string(m)
	}
	return sources, op
}
