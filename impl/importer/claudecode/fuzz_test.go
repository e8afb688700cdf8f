package claudecode_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/surfacelog/surface/impl/importer/claudecode"
)

// FuzzImport: whatever the bytes, Check and Import return (never panic),
// and an import that succeeds yields a log that loads.
func FuzzImport(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*.jsonl")
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		file, err := claudecode.Parse(bytes.NewReader(raw))
		if err != nil {
			return
		}
		claudecode.Check(file)
		l, err := claudecode.Import(file)
		if err != nil {
			return
		}
		project(t, l)
		l.CheckStrict()
	})
}
