package model_test

import (
	"strings"
	"testing"

	"github.com/surfacelog/surface/conformance"
)

// TestModelKeepsItsVectors: the model answers every committed conformance
// vector as it did when the vectors were generated from it (gen/vectors),
// so a change of the model's semantics shows here, in its own package,
// before `go generate` would rewrite the vectors. (The differential tests
// of impl/... compare it with the library over random logs.)
func TestModelKeepsItsVectors(t *testing.T) {
	vectors, err := conformance.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := conformance.Run(vectors, conformance.NewModelMachine(), conformance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Counts()[conformance.StatusPass] != len(vectors) {
		var b strings.Builder
		rep.WriteText(&b)
		t.Fatalf("%s", b.String())
	}
}
