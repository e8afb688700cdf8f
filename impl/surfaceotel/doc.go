// Package surfaceotel reports what the surface library does as
// OpenTelemetry metrics and spans: an observe.Observer to give a session
// with session.WithObserver (persist.Resume and persist.Fork pass it to
// the store; impl/compaction reports through it).
//
// It is a Go module of its own (github.com/surfacelog/surface/impl/surfaceotel),
// so that the library itself pulls in no telemetry SDK. It uses only the
// OpenTelemetry API: the application installs the SDK and its exporters
// and passes the providers (or sets the global ones).
//
// Metrics (meter "github.com/surfacelog/surface"):
//
//	surface.append.count            {event.type, outcome}   appends and batches
//	surface.append.events           {event.type}            events appended
//	surface.append.duration         s   {event.type, outcome}
//	surface.append.lock_wait        s   wait for the session's writer lock
//	surface.store.write.duration    s   {store, synced}
//	surface.store.sync.duration     s   {store}              fsync / commit latency
//	surface.compaction.count        {outcome}                committed, aborted, failed
//	surface.compaction.nodes        {node}   nodes a committed summary replaced
//	surface.compaction.tokens.before, surface.compaction.tokens.after  {token}
//	surface.compaction.lock_wait    s
//	surface.prune.count             {outcome}
//	surface.prune.tokens.saved      {token}
//	surface.repair.count, surface.repair.closers
//	surface.resume.count {store, outcome}, surface.resume.duration s, surface.resume.events
//	surface.fork.count {store, outcome}, surface.fork.duration s
//
// Spans (tracer "github.com/surfacelog/surface"), each with the
// operation's own start and end times: surface.compaction, surface.prune,
// surface.repair, surface.resume, surface.fork, and, with
// WithAppendSpans, surface.append and surface.store.write. A failed
// operation's span records the error and has status Error.
package surfaceotel
