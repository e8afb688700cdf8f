package fuzz

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surfacelog/surface/conformance"
)

// TestWriteCorpus writes the seed corpora under testdata/fuzz from the
// conformance vectors (SURFACE_WRITE_CORPUS=1 go test -run TestWriteCorpus
// ./fuzz). Without the variable it checks that the corpora exist.
func TestWriteCorpus(t *testing.T) {
	write := os.Getenv("SURFACE_WRITE_CORPUS") != ""
	vectors, err := conformance.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	corpus := map[string][]string{}
	for _, v := range vectors {
		if !strings.HasPrefix(v.ID, "surface.edge.") {
			continue
		}
		for _, s := range v.Steps {
			if s.DataText != nil {
				corpus["FuzzData"] = append(corpus["FuzzData"], *s.DataText)
			}
			if s.Lines != nil {
				corpus["FuzzSeed"] = append(corpus["FuzzSeed"], strings.Join(*s.Lines, "\n"))
				corpus["FuzzJSONL"] = append(corpus["FuzzJSONL"], strings.Join(*s.Lines, "\n")+"\n")
			}
			if s.Expect != nil && s.Expect.Event != nil {
				corpus["FuzzJSONL"] = append(corpus["FuzzJSONL"], string(s.Expect.Event)+"\n")
			}
		}
	}
	for target, inputs := range corpus {
		dir := filepath.Join("testdata", "fuzz", target)
		if !write {
			if entries, _ := os.ReadDir(dir); len(entries) == 0 {
				t.Errorf("no seed corpus in %s", dir)
			}
			continue
		}
		os.MkdirAll(dir, 0o755)
		for i, in := range inputs {
			if i >= 40 {
				break
			}
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", in)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("vector-%03d", i)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
