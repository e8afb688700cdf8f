// Package explore is a bounded explorer of the state machine of
// tla/Surface.tla, written in Go so that CI can check what TLC checks
// without a model checker.
//
// Explore walks every state reachable within the bounds of an MC*.cfg
// file, breadth first, with the actions of the TLA+ spec, generating
// successors the way TLC does (a rejected candidate is a step back to the
// same state), and checks every state against the invariants and every
// step against the properties the config names. Where nothing is planted
// it also asks model/ the same questions the spec answers (is this
// candidate accepted, what is the fold of this log, is this cut balanced,
// what are the repair closers) and reports any disagreement. The result
// must be the states TLC finds: as many, and the same set, compared by a
// digest of their canonical forms (ParseDump reads TLC's -dump file).
//
// The spec's Bug constant plants a wrong edit; the explorer plants the
// same ones (Bugs), and each must be caught. The declarative invariants
// (decl.go, the *Decl names) restate rules over positions of the log
// without the functions the actions use, so a wrong shared definition is
// caught too; the NotReached_* witnesses of the MCReach_* configs show
// that the bounds reach the commits that matter.
//
// ReplayTrace is tla/TraceSurface.tla in Go: it checks an implementation
// trace (impl/session.WithTrace) step by step against the spec.
package explore
