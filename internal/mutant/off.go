//go:build !surface_mutant

// Package mutant switches on deliberately broken variants of the
// implementation, so that the test suite can prove it catches them. In a
// normal build On is constant false and the broken code is compiled away;
// build with -tags surface_mutant and set SURFACE_MUTANT=name to break one
// thing. See scripts/mutation.sh.
package mutant

// On reports whether the named mutant is active. It is always false unless
// the build has the surface_mutant tag.
func On(string) bool { return false }
