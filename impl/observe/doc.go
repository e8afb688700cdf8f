// Package observe is how the library reports what it does, for logs,
// metrics and traces: an Observer receives a record of every append (its
// lock wait and its store write), every store write (its sync latency),
// compaction, prune, repair, resume and fork.
//
// Observability is off by default: a session without an observer
// (session.WithObserver) does nothing more than check a nil pointer, and
// allocates nothing more on its append path. Logger is an Observer that
// writes log/slog records (appends at debug level, the rest at info,
// failures at warn); the OpenTelemetry observer, with spans and metrics,
// lives in its own Go module, github.com/surfacelog/surface/impl/otel, so
// that importing the library pulls in no telemetry SDK.
//
// A store gets the observer of the session it is resumed or forked into;
// the compaction package reports through the session's.
package observe
