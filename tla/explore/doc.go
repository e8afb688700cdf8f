// Package explore is a bounded explorer of the state machine of
// tla/Surface.tla, written in Go so that CI can check what TLC checks
// without a model checker. It walks every state reachable within the
// bounds of an MC*.cfg file, breadth first, with the actions of the TLA+
// spec; the semantics of the log come from model/ (the fold of a log into
// its surface, the repair closers), so the walk also checks that the TLA+
// spec and the Go oracle agree. Every state is checked against the TLA+
// invariants, and every step against its step properties. The number of
// distinct states must equal the number TLC reports (tla/counts.json).
package explore
