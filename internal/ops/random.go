package ops

import (
	"fmt"
	"sort"
	"strings"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// RunProgram interprets a program of numbers as a sequence of steps (at
// most maxSteps) generated from the model's state, runs each on a fresh
// implementation/model pair, and returns the steps run and the first
// divergence ("" when the two agree).
func RunProgram(numbers []uint32, maxSteps int) (*Pair, []Step, string) {
	prog := &Program{Numbers: numbers}
	p := NewPair()
	var steps []Step
	for len(steps) < maxSteps && !prog.Exhausted() {
		s := GenStep(prog, p.ModelState())
		steps = append(steps, s)
		if d := p.Step(s); d != "" {
			return p, steps, d
		}
	}
	return p, steps, ""
}

// RandomReport is the result of a RandomCheck.
type RandomReport struct {
	Sequences int
	Steps     int
	Outcomes  map[string]int
	// Failure describes the shrunk failing sequence, "" when none failed.
	Failure string
	// Minimal is the shrunk failing program (see RunProgram).
	Minimal []uint32
}

func (r RandomReport) String() string {
	var codes []string
	for c := range r.Outcomes {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	var b strings.Builder
	fmt.Fprintf(&b, "%d random sequences, %d steps\n", r.Sequences, r.Steps)
	for _, c := range codes {
		name := c
		if name == "" {
			name = "(accepted)"
		}
		fmt.Fprintf(&b, "  %-32s %d\n", name, r.Outcomes[c])
	}
	if r.Failure != "" {
		b.WriteString(r.Failure)
	}
	return b.String()
}

// RandomCheck runs n gopter-generated programs differentially against the
// model. On a divergence gopter shrinks the program, and the report lists
// the minimal failing step sequence.
func RandomCheck(n int, seed int64, maxSteps int) RandomReport {
	params := gopter.DefaultTestParametersWithSeed(seed)
	params.MinSuccessfulTests = n
	params.MaxSize = 3000
	params.Workers = 1
	report := RandomReport{Outcomes: map[string]int{}}
	props := gopter.NewProperties(params)
	props.Property("implementation agrees with the model", prop.ForAll(
		func(program []uint32) bool {
			p, steps, diff := RunProgram(program, maxSteps)
			if diff == "" {
				report.Sequences++
				report.Steps += len(steps)
				for c, k := range p.Codes {
					report.Outcomes[c] += k
				}
			}
			return diff == ""
		},
		gen.SliceOf(gen.UInt32()),
	))
	var minimal []uint32
	res := props.Run(reporter{func(r *gopter.TestResult) {
		if !r.Passed() && len(r.Args) > 0 {
			minimal, _ = r.Args[0].Arg.([]uint32)
		}
	}})
	if !res {
		_, steps, diff := RunProgram(minimal, maxSteps)
		var b strings.Builder
		fmt.Fprintf(&b, "FAILED: minimal program %v gives %d steps:\n", minimal, len(steps))
		for i, s := range steps {
			fmt.Fprintf(&b, "  %d. %s\n", i+1, s)
		}
		b.WriteString(diff)
		report.Failure = b.String()
		report.Minimal = minimal
	}
	return report
}

type reporter struct{ f func(*gopter.TestResult) }

func (r reporter) ReportTestResult(_ string, res *gopter.TestResult) { r.f(res) }
