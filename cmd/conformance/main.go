// Command conformance checks implementations of the surface specification
// (spec/README.md) with the conformance vectors of package conformance.
//
//	conformance [run] [flags]       play the vectors against a testee (default: the built-in implementation)
//	conformance testee [--model]    serve the testee protocol on stdin/stdout (spec/PROTOCOL.md)
//	conformance random [flags]      random differential runs against the model (gopter), shrunk on failure
//	conformance validate FILE...    check a persisted log (JSONL or SQLite) against the spec
//	conformance coverage            the rule and error-code coverage of the vectors
//
// Exit status: 0 pass, 1 failures, 2 usage or runner error.
package main

import (
	"encoding/json"

	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/surfacelog/surface/conformance"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/internal/ops"
	"github.com/surfacelog/surface/spec"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "run":
		return runCmd(args, stdout, stderr)
	case "testee":
		return testeeCmd(args, stdin, stdout, stderr)
	case "random":
		return randomCmd(args, stdout, stderr)
	case "validate":
		return validateCmd(args, stdout, stderr)
	case "coverage":
		return coverageCmd(stdout, stderr)
	case "help":
		fmt.Fprintln(stdout, "usage: conformance [run|testee|random|validate|coverage] [flags]; conformance CMD -h for flags")
		return 0
	default:
		fmt.Fprintf(stderr, "conformance: unknown command %q (want run, testee, random, validate or coverage)\n", cmd)
		return 2
	}
}

func runCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	execCmd := fs.String("exec", "", "run this command as the testee (it speaks spec/PROTOCOL.md on stdin/stdout)")
	useModel := fs.Bool("model", false, "test the model instead of the built-in implementation")
	prefix := fs.String("prefix", "", "only vectors whose id starts with this")
	tier := fs.String("tier", "", "only vectors of this tier (required, recommended)")
	features := fs.String("feature", "", "only vectors needing no feature outside this comma-separated list")
	known := fs.String("known-failures", "", "file of expected failures; a listed vector that passes, fails differently or is skipped fails the run")
	fix := fs.Bool("fix", false, "rewrite the --known-failures file from this run's failures")
	format := fs.String("format", "text", "output format: text, json or junit")
	out := fs.String("out", "", "write the report to this file instead of stdout")
	vectorsDir := fs.String("vectors", "", "read vector files from this directory instead of the embedded ones")
	timeout := fs.Duration("timeout", 10*time.Second, "per-request timeout for an --exec testee")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	vectors, err := loadVectors(*vectorsDir)
	if err != nil {
		fmt.Fprintln(stderr, "conformance:", err)
		return 2
	}
	var t conformance.Testee
	switch {
	case *execCmd != "":
		t = &conformance.Exec{Command: *execCmd, Timeout: *timeout, Log: stderr}
	case *useModel:
		t = conformance.NewModelMachine()
	default:
		t = conformance.NewImplMachine()
	}
	defer t.Close()
	opts := conformance.Options{Filter: conformance.Filter{Prefix: *prefix, Tier: *tier}, Progress: stderr}
	if *features != "" {
		opts.Filter.Features = strings.Split(*features, ",")
	}
	if *known != "" && !*fix {
		if opts.KnownFailures, err = conformance.ReadKnownFailures(*known); err != nil {
			fmt.Fprintln(stderr, "conformance:", err)
			return 2
		}
	}
	rep, err := conformance.Run(vectors, t, opts)
	if err != nil {
		fmt.Fprintln(stderr, "conformance:", err)
		return 2
	}
	w := stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(stderr, "conformance:", err)
			return 2
		}
		defer f.Close()
		w = f
	}
	switch *format {
	case "json":
		err = rep.WriteJSON(w)
	case "junit":
		err = rep.WriteJUnit(w)
	case "text":
		rep.WriteText(w)
	default:
		fmt.Fprintf(stderr, "conformance: unknown format %q\n", *format)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "conformance:", err)
		return 2
	}
	if *out != "" || *format != "text" {
		c := rep.Counts()
		fmt.Fprintf(stderr, "%d vectors: %d passed, %d failed, %d errored, %d skipped\n", len(rep.Outcomes), c["pass"], c["fail"], c["error"], c["skipped"])
	}
	if *fix && *known != "" {
		if err := rep.WriteKnownFailures(*known); err != nil {
			fmt.Fprintln(stderr, "conformance:", err)
			return 2
		}
		fmt.Fprintf(stderr, "wrote %s\n", *known)
		return 0
	}
	if !rep.OK() {
		return 1
	}
	return 0
}

func loadVectors(dir string) ([]conformance.Vector, error) {
	if dir == "" {
		return conformance.Embedded()
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var all []conformance.Vector
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(dir + "/" + e.Name())
		if err != nil {
			return nil, err
		}
		vs, err := conformance.Parse(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		all = append(all, vs...)
	}
	return all, nil
}

func testeeCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testee", flag.ContinueOnError)
	fs.SetOutput(stderr)
	useModel := fs.Bool("model", false, "serve the model instead of the built-in implementation")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var m *conformance.Machine
	if *useModel {
		m = conformance.NewModelMachine()
	} else {
		m = conformance.NewImplMachine()
	}
	if err := conformance.Serve(m, stdin, stdout); err != nil {
		fmt.Fprintln(stderr, "testee:", err)
		return 2
	}
	return 0
}

func randomCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("random", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 300, "number of random sequences")
	seed := fs.Int64("seed", time.Now().UnixNano(), "gopter seed")
	steps := fs.Int("steps", 200, "most steps per sequence")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fmt.Fprintf(stdout, "random differential check, impl vs model (seed %d)\n", *seed)
	r := ops.RandomCheck(*n, *seed, *steps)
	fmt.Fprint(stdout, r)
	if r.Failure == "" {
		fmt.Fprintln(stdout, "PASS: the implementation agrees with the model on every step")
		return 0
	}
	_, opsSteps, _ := ops.RunProgram(r.Minimal, *steps)
	vsteps, rules := conformance.Expect(conformance.FromOps(opsSteps))
	v := conformance.Vector{ID: fmt.Sprintf("surface.regression.seed%d.001", *seed), Tier: conformance.TierRequired, Rules: rules,
		Features: conformance.Features(vsteps), Description: "found by conformance random; expectations from the model", Steps: vsteps}
	b, _ := json.MarshalIndent(conformance.File{Vectors: []conformance.Vector{v}}, "", " ")
	fmt.Fprintf(stdout, "\nready-to-commit vector (add it to a file under conformance/vectors):\n%s\n", b)
	return 1
}

func coverageCmd(stdout, stderr io.Writer) int {
	vectors, err := conformance.Embedded()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	rules, codes := conformance.Coverage(vectors)
	fmt.Fprintf(stdout, "%d vectors\n\n| rule | level | vectors |\n| --- | --- | --- |\n", len(vectors))
	for _, r := range spec.Rules() {
		fmt.Fprintf(stdout, "| %s (%s) | %s | %d |\n", r.ID, r.Title, r.Level, rules[r.ID])
	}
	fmt.Fprintf(stdout, "\n| code | vectors |\n| --- | --- |\n")
	for _, c := range event.Codes() {
		fmt.Fprintf(stdout, "| %s | %d |\n", c, codes[string(c)])
	}
	return 0
}
