package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestVectorsAreCurrent: the generator writes exactly the committed
// vector files (CI's drift check does the same through go generate; here
// it is a test of this package, so a change of a generator shows in it).
func TestVectorsAreCurrent(t *testing.T) {
	dir := t.TempDir()
	all, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 500 {
		t.Fatalf("%d vectors", len(all))
	}
	for _, name := range fileNames {
		got, err := os.ReadFile(filepath.Join(dir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("../../conformance/vectors", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s.json: the generated file (%d bytes) differs from the committed one (%d bytes): run go generate ./conformance", name, len(got), len(want))
		}
	}
}
