package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCatalogIsCurrent: the generator, run on the spec, writes exactly
// the committed impl/event/catalog_gen.go (CI's drift check does the same
// through go generate; here it is a test of this package).
func TestCatalogIsCurrent(t *testing.T) {
	dir := t.TempDir()
	if err := generate("../../spec", dir); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "catalog_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../impl/event/catalog_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the generated catalog (%d bytes) differs from the committed one (%d bytes): run go generate ./impl/event", len(got), len(want))
	}
}
