package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestReadmeSectionIsGenerated: the README's performance section is what
// cmd/benchreport writes from the committed run
// (impl/session/testdata/bench/readme.txt), so its figures cannot be
// edited by hand or drift from the run; and the commit the run names is
// in the repository's history.
func TestReadmeSectionIsGenerated(t *testing.T) {
	raw, err := os.ReadFile("../../impl/session/testdata/bench/readme.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseRun(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := rewriteReadme(string(readme), sectionText(r))
	if err != nil {
		t.Fatal(err)
	}
	if want != string(readme) {
		t.Errorf("README.md's performance section is not what benchreport writes from readme.txt: run go run ./cmd/benchreport -readme README.md < impl/session/testdata/bench/readme.txt")
	}
	// The named commit must be in the history, when there is a whole one
	// to look in (not a shallow clone, not a tree without .git).
	commit := strings.Fields(r.commit)[0]
	shallow, err := exec.Command("git", "rev-parse", "--is-shallow-repository").Output()
	if err == nil && strings.TrimSpace(string(shallow)) == "false" {
		if out, err := exec.Command("git", "cat-file", "-e", commit+"^{commit}").CombinedOutput(); err != nil {
			t.Errorf("the run names commit %s, which the repository does not have: %v %s", commit, err, out)
		}
	}
	if len(r.results) < 10 {
		t.Errorf("the run holds %d benchmark results: it is not the run bench-readme.sh makes", len(r.results))
	}
}

// TestSectionFromAHandWrittenRun: a run written by hand (not by go test)
// gives the ratios it holds, each with its figures, and the growth rows;
// a run that names no commit is refused; a README without the markers is
// refused.
func TestSectionFromAHandWrittenRun(t *testing.T) {
	in := `commit: 0123456789abcdef
date: 2026-12-05
cpu: Some CPU
BenchmarkStrictAppend-2   	 300	 9000 ns/op	 3000 loose-ns/op	 6000 strict-ns/op	 2.000 strict/loose	 10 B/op	 1 allocs/op
BenchmarkAppendDerive/impl/1000-2 	 2000	 700 ns/op
BenchmarkAppendDerive/impl/1000000-2 	 2000	 1400 ns/op
BenchmarkReplace/impl/1000/k=100-2 	 2000	 20000 ns/op
BenchmarkReplace/impl/1000000/k=100-2 	 2000	 25000 ns/op
`
	r, err := parseRun(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	s := sectionText(r)
	for _, want := range []string{
		"at commit `0123456789`", "(Some CPU)",
		"| `StrictAppend` | strict/loose: 2.00x | 3.00 µs loose-ns/op, 6.00 µs strict-ns/op |",
		"| `AppendDerive` | 700 ns at 1000 | 1.40 µs at 1e+06 | 2.00x |",
		"| `Replace/k=100` | 20.00 µs at 1000 | 25.00 µs at 1e+06 | 1.25x |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the section lacks %q:\n%s", want, s)
		}
	}
	if _, err := parseRun(strings.NewReader("BenchmarkX-2 1 5 ns/op\n")); err == nil {
		t.Error("a run naming no commit was accepted")
	}
	if _, err := rewriteReadme("# no markers\n", s); err == nil {
		t.Error("a README without markers was accepted")
	}
	got, err := rewriteReadme("a\n"+readmeBegin+"\nold\n"+readmeEnd+"\nb\n", "new\n")
	if err != nil || got != "a\n"+readmeBegin+"\nnew\n"+readmeEnd+"\nb\n" {
		t.Errorf("rewrite: %q, %v", got, err)
	}
}

// TestIsRatio: the ratios the benchmarks report, hyphenated names
// included, beside look-alike quantities per something.
func TestIsRatio(t *testing.T) {
	for unit, want := range map[string]bool{
		"strict/loose":         true,
		"resume/floor":         true,
		"first/steady":         true,
		"first/cold-steady":    true,
		"checkpoint/replay":    true,
		"ns/op":                false,
		"B/op":                 false,
		"ns/node":              false,
		"steady-ns/op":         false,
		"checkpoint-cpu-ns/op": false,
		"group-µs/turn":        false,
		"onepass-ns/msg":       false,
		"allocs/op":            false,
		"kept/":                false,
		"-a/b":                 false,
	} {
		if got := isRatio(unit); got != want {
			t.Errorf("isRatio(%q) = %v, want %v", unit, got, want)
		}
	}
}
