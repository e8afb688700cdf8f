//go:build surface_mutant

package mutant

import "os"

var active = os.Getenv("SURFACE_MUTANT")

// On reports whether the named mutant is active (SURFACE_MUTANT=name).
func On(name string) bool { return active == name }
