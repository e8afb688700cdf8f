// Command conformance checks implementations of the surface specification
// (spec/README.md) with the conformance vectors of package conformance.
// `conformance help` lists the commands and their flags.
//
//	conformance [run] [flags] [-- ARGV...]  play the vectors against a testee (default: the built-in implementation)
//	conformance testee [--model]           serve the testee protocol on stdin/stdout (spec/PROTOCOL.md)
//	conformance random [flags]             random differential runs against the model (gopter), shrunk on failure
//	conformance validate FILE...           check a persisted log (JSONL or SQLite) against the spec
//	conformance coverage                   the rule, error-code and difference coverage of the vectors
//	conformance known-failures             a seed system's recorded failures, each with its D-row
//
// Exit status: 0 pass, 1 failures (or a run that proves nothing: no vector
// selected, every vector skipped, no core feature), 2 usage or runner error.
package main

import (
	"encoding/json"
	"slices"

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
		return coverageCmd(args, stdout, stderr)
	case "known-failures":
		return knownFailuresCmd(args, stdout, stderr)
	case "help", "-h", "--help":
		return helpCmd(stdout)
	default:
		fmt.Fprintf(stderr, "conformance: unknown command %q (want run, testee, random, validate, coverage or known-failures)\n", cmd)
		return 2
	}
}

// commands is the help: each command, one line, and its flags.
var commands = []struct {
	name, usage, what string
	flags             func() *flag.FlagSet
}{
	{"run", "conformance [run] [flags] [-- ARGV...]", "play the vectors against a testee; after --, the testee's argv (no shell)", func() *flag.FlagSet { fs, _ := runFlags(); return fs }},
	{"testee", "conformance testee [--model]", "serve the testee protocol on stdin/stdout", func() *flag.FlagSet { fs, _ := testeeFlags(); return fs }},
	{"random", "conformance random [flags]", "random differential runs, implementation against model, shrunk on failure", func() *flag.FlagSet { fs, _ := randomFlags(); return fs }},
	{"validate", "conformance validate [flags] FILE|POSTGRES-URL...", "check stored logs (JSONL files, SQLite databases, postgres:// URLs) against the spec, read-only", func() *flag.FlagSet { fs, _ := validateFlags(io.Discard); return fs }},
	{"coverage", "conformance coverage", "the rules, error codes and differences the vectors cover", nil},
	{"known-failures", "conformance known-failures [flags]", "a seed system's recorded failures, each with the row that explains it; or (--explain) built anew from reports of runs of it", func() *flag.FlagSet { fs, _, _, _ := knownFailuresFlags(); return fs }},
	{"help", "conformance help", "this list", nil},
}

func helpCmd(w io.Writer) int {
	fmt.Fprintln(w, "conformance: test implementations of the surface specification (spec/README.md)")
	for _, c := range commands {
		fmt.Fprintf(w, "\n  %-44s %s\n", c.usage, c.what)
		if c.flags == nil {
			continue
		}
		c.flags().VisitAll(func(f *flag.Flag) {
			name := "--" + f.Name
			if f.DefValue != "" && f.DefValue != "false" {
				name += "=" + f.DefValue
			}
			fmt.Fprintf(w, "      %-28s %s\n", name, f.Usage)
		})
	}
	fmt.Fprintln(w, "\nexit status: 0 pass; 1 failures, or a run that proves nothing; 2 usage or runner error")
	fmt.Fprintln(w, "(`go run` reports every non-zero status of the program as 1: build the binary to see 2)")
	return 0
}

// parse parses the flags of command name, with a usage message that names
// the command (not "Usage of run:"). It returns the exit status to end
// with, or -1 to go on: -h and --help print the usage and end with 0, a
// bad flag ends with 2.
func parse(fs *flag.FlagSet, name string, args []string, stderr io.Writer) int {
	fs.SetOutput(stderr)
	fs.Usage = func() { commandUsage(stderr, name, fs) }
	switch err := fs.Parse(args); {
	case err == flag.ErrHelp:
		return 0
	case err != nil:
		return 2
	}
	return -1
}

// commandUsage prints one command's usage line and flags.
func commandUsage(w io.Writer, name string, fs *flag.FlagSet) {
	for _, c := range commands {
		if c.name == name {
			fmt.Fprintf(w, "usage: %s\n  %s\n", c.usage, c.what)
		}
	}
	if name == "validate" {
		fmt.Fprintln(w, "exit status: 0 every log valid, 1 a log breaks a rule, 2 usage or input error")
	}
	fs.VisitAll(func(f *flag.Flag) {
		n := "--" + f.Name
		if f.DefValue != "" && f.DefValue != "false" {
			n += "=" + f.DefValue
		}
		fmt.Fprintf(w, "  %-28s %s\n", n, f.Usage)
	})
}

// parseInterleaved is parse for a command whose flags may come after its
// operands (validate FILE --session ID): it returns the operands. After
// "--" everything is an operand.
func parseInterleaved(fs *flag.FlagSet, name string, args []string, stderr io.Writer) ([]string, int) {
	var operands []string
	for {
		if code := parse(fs, name, args, stderr); code >= 0 {
			return nil, code
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return operands, -1
		}
		if len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(operands, rest...), -1
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}
}

type runOptions struct {
	execCmd, prefix, tier, rule, rerun, features, known, format, out, vectorsDir *string
	useModel, fix, verbose                                                       *bool
	timeout                                                                      *time.Duration
	maxTimeouts                                                                  *int
}

func runFlags() (*flag.FlagSet, runOptions) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var o runOptions
	o.execCmd = fs.String("exec", "", "the testee: a shell command line run by /bin/sh -c (quoting works); or give its argv after --")
	o.useModel = fs.Bool("model", false, "test the model instead of the built-in implementation")
	o.prefix = fs.String("prefix", "", "only vectors whose id starts with this")
	o.tier = fs.String("tier", "", "only vectors of this tier (required, recommended)")
	o.rule = fs.String("rule", "", "only vectors that cover this rule (e.g. SURF-13)")
	o.rerun = fs.String("rerun", "", "only the vectors that failed or errored in this earlier --format json report")
	o.features = fs.String("feature", "", "only vectors needing no feature outside this comma-separated list")
	o.known = fs.String("known-failures", "", "file of expected failures; a listed vector that passes, fails differently or is skipped fails the run")
	o.fix = fs.Bool("fix", false, "rewrite the --known-failures file from this run's failures")
	o.format = fs.String("format", "text", "output format: text, json or junit")
	o.out = fs.String("out", "", "write the report to this file instead of stdout")
	o.vectorsDir = fs.String("vectors", "", "read vector files from this directory instead of the embedded ones")
	o.timeout = fs.Duration("timeout", 10*time.Second, "per-request timeout for an --exec testee")
	o.maxTimeouts = fs.Int("max-timeouts", 3, "stop after this many vectors in a row time out")
	o.verbose = fs.Bool("verbose", false, "print the whole failing step and the whole results wanted and got")
	return fs, o
}

func runCmd(args []string, stdout, stderr io.Writer) int {
	fs, o := runFlags()
	execCmd := o.execCmd
	useModel, prefix, tier, features, known, fix, format, out, vectorsDir, timeout := o.useModel, o.prefix, o.tier, o.features, o.known, o.fix, o.format, o.out, o.vectorsDir, o.timeout
	if code := parse(fs, "run", args, stderr); code >= 0 {
		return code
	}
	argv := fs.Args() // after --: the testee's argv
	if len(argv) > 0 && *execCmd != "" {
		fmt.Fprintln(stderr, "conformance: give the testee either --exec or an argv after --, not both")
		return 2
	}
	if *useModel && (len(argv) > 0 || *execCmd != "") {
		fmt.Fprintln(stderr, "conformance: --model tests the built-in model; it cannot be combined with a testee (--exec or an argv after --)")
		return 2
	}
	if *o.maxTimeouts < 1 || *timeout <= 0 {
		fmt.Fprintln(stderr, "conformance: --timeout and --max-timeouts must be positive")
		return 2
	}
	vectors, err := loadVectors(*vectorsDir)
	if err != nil {
		fmt.Fprintln(stderr, "conformance:", err)
		return 2
	}
	var t conformance.Testee
	var x *conformance.Exec
	stopSignals := func() {}
	switch {
	case len(argv) > 0:
		x = &conformance.Exec{Argv: argv, Timeout: *timeout, Log: stderr}
	case *execCmd != "":
		x = &conformance.Exec{Command: *execCmd, Timeout: *timeout, Log: stderr}
	}
	switch {
	case x != nil:
		t = x
		stopSignals = forwardSignals(x, stderr)
		defer stopSignals()
	case *useModel:
		t = conformance.NewModelMachine()
	default:
		t = conformance.NewImplMachine()
	}
	defer t.Close()
	opts := conformance.Options{Filter: conformance.Filter{Prefix: *prefix, Tier: *tier, Rule: *o.rule}, Progress: stderr, Verbose: *o.verbose, MaxTimeouts: *o.maxTimeouts}
	if *o.rerun != "" {
		ids, err := conformance.FailuresOf(*o.rerun)
		if err != nil {
			fmt.Fprintln(stderr, "conformance:", err)
			return 2
		}
		opts.Filter.IDs = ids
	}
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
	stopSignals() // after a forwarded signal, this waits for the exit
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
		fmt.Fprintf(stderr, "%d vectors: %d passed, %d failed, %d errored, %d skipped; conformance level: %s\n", len(rep.Outcomes), c["pass"], c["fail"], c["error"], c["skipped"], rep.Level())
		for _, p := range rep.Problems {
			fmt.Fprintln(stderr, "PROBLEM:", p)
		}
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

func testeeFlags() (*flag.FlagSet, *bool) {
	fs := flag.NewFlagSet("testee", flag.ContinueOnError)
	return fs, fs.Bool("model", false, "serve the model instead of the built-in implementation")
}

func testeeCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, useModel := testeeFlags()
	if code := parse(fs, "testee", args, stderr); code >= 0 {
		return code
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

type randomOptions struct {
	n, steps *int
	seed     *int64
}

func randomFlags() (*flag.FlagSet, randomOptions) {
	fs := flag.NewFlagSet("random", flag.ContinueOnError)
	return fs, randomOptions{
		n:     fs.Int("n", 300, "number of random sequences"),
		seed:  fs.Int64("seed", 0, "gopter seed (0: the clock)"),
		steps: fs.Int("steps", 200, "most steps per sequence"),
	}
}

func randomCmd(args []string, stdout, stderr io.Writer) int {
	fs, o := randomFlags()
	n, seed, steps := o.n, o.seed, o.steps
	if code := parse(fs, "random", args, stderr); code >= 0 {
		return code
	}
	if *n < 1 || *steps < 1 || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "conformance random: -n and -steps must be at least 1, and random takes no operands")
		return 2
	}
	if *seed == 0 {
		*seed = time.Now().UnixNano()
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

func coverageCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("coverage", flag.ContinueOnError)
	if code := parse(fs, "coverage", args, stderr); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "conformance coverage: takes no operands")
		return 2
	}
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
	diffs := conformance.DifferenceCoverage(vectors)
	fmt.Fprintf(stdout, "\n| difference | vectors |\n| --- | --- |\n")
	var without []string
	for _, d := range spec.Differences() {
		n := fmt.Sprint(diffs[d.ID])
		if why, ok := conformance.NoVector[d.ID]; ok {
			n = "none: " + why
		} else if diffs[d.ID] == 0 {
			without = append(without, d.ID)
		}
		fmt.Fprintf(stdout, "| %s (%s) | %s |\n", d.ID, d.Topic, n)
	}
	if len(without) > 0 {
		fmt.Fprintf(stdout, "\nrows without a vector: %s\n", strings.Join(without, ", "))
	}
	return 0
}

// listFlag is a flag that may be given several times.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func knownFailuresFlags() (*flag.FlagSet, *string, *listFlag, *string) {
	fs := flag.NewFlagSet("known-failures", flag.ContinueOnError)
	seed := fs.String("seed", conformance.SeedB736, "the seed system: "+strings.Join(conformance.SeedSystems, " or "))
	reports := &listFlag{}
	fs.Var(reports, "explain", "build the file from this --format json report of a run of the seed system (repeat for several runs: a digest that differs between them is left out)")
	out := fs.String("out", "", "write the file here instead of stdout")
	return fs, seed, reports, out
}

// knownFailuresCmd prints a seed system's known-failures file: the
// committed one, or (--explain) one built from reports of runs of it, each
// failure with the row of spec/DIFFERENCES.md that explains it.
func knownFailuresCmd(args []string, stdout, stderr io.Writer) int {
	fs, seed, reports, out := knownFailuresFlags()
	if code := parse(fs, "known-failures", args, stderr); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "conformance known-failures: takes no operands")
		return 2
	}
	if !slices.Contains(conformance.SeedSystems, *seed) {
		fmt.Fprintf(stderr, "conformance known-failures: --seed %q: want %s\n", *seed, strings.Join(conformance.SeedSystems, " or "))
		return 2
	}
	var k conformance.KnownFailures
	if len(*reports) == 0 {
		var err error
		if k, err = conformance.SeedKnownFailures(*seed); err != nil {
			fmt.Fprintln(stderr, "conformance known-failures:", err)
			return 2
		}
	} else {
		vectors, err := conformance.Embedded()
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		var reps []*conformance.Report
		for _, path := range *reports {
			rep, err := conformance.ReadReport(path)
			if err != nil {
				fmt.Fprintln(stderr, "conformance known-failures:", err)
				return 2
			}
			reps = append(reps, rep)
		}
		var problems []string
		k, problems = conformance.ExplainReports(*seed, vectors, reps)
		if len(problems) > 0 {
			fmt.Fprintf(stderr, "conformance known-failures: %d failures not explained (add a rule to conformance/explain.go, or a row to spec/DIFFERENCES.md):\n", len(problems))
			for _, p := range problems {
				fmt.Fprintln(stderr, "  "+p)
			}
			return 1
		}
	}
	b, _ := json.MarshalIndent(k, "", "  ")
	b = append(b, '\n')
	if *out != "" {
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			fmt.Fprintln(stderr, "conformance known-failures:", err)
			return 2
		}
		return 0
	}
	stdout.Write(b)
	return 0
}
