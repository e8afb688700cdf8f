package codex_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/surfacelog/surface/impl/importer/codex"
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
		file, err := codex.Parse(bytes.NewReader(raw))
		if err != nil {
			return
		}
		codex.Check(file)
		l, err := codex.Import(file)
		if err != nil {
			return
		}
		messagesOf(t, l)
		l.CheckStrict()
	})
}
