// Package event is the vocabulary of a session log: the Event type, the
// surfaceOp marker and the surface Intent, the event catalog generated from
// spec/events.json, the error codes generated from spec/errors.json, the
// strict JSON codec of an event, and the event-local checks of the spec
// (SURF-1 to SURF-9).
//
// Everything a rejection reports is an *Error whose Code is stable and
// language-neutral; match it with errors.Is(err, event.CodeSourcesDuplicate)
// or read it with event.CodeOf(err).
package event

//go:generate go run ../../gen/catalog -spec ../../spec -event .
