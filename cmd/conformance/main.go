// Command conformance checks implementations of the surface specification.
//
//	conformance            self-check: random sequences, built-in implementation vs model
//	conformance random     the same, with -n, -seed and -steps
//
// Exit status: 0 pass, 1 failures, 2 usage or runner error.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/surfacelog/surface/internal/ops"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	cmd := "random"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "random":
		return random(args, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "conformance: unknown command %q (want: random)\n", cmd)
		return 2
	}
}

func random(args []string, stdout, stderr io.Writer) int {
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
	if r.Failure != "" {
		return 1
	}
	fmt.Fprintln(stdout, "PASS: the implementation agrees with the model on every step")
	return 0
}
