package ops

import (
	"flag"
	"os"
	"strconv"

	"pgregory.net/rapid"
)

// Rapid makes a generator's choices with rapid, so rapid can shrink them.
type Rapid struct{ T *rapid.T }

// Intn implements Chooser.
func (r Rapid) Intn(n int, label string) int { return rapid.IntRange(0, n-1).Draw(r.T, label) }

// Program makes a generator's choices from a fixed list of numbers (for
// gopter and for fuzzing from bytes); past its end every choice is 0, the
// simplest one, so a shorter program is a simpler test.
type Program struct {
	Numbers []uint32
	pos     int
}

// Intn implements Chooser.
func (p *Program) Intn(n int, _ string) int {
	if p.pos >= len(p.Numbers) {
		return 0
	}
	v := p.Numbers[p.pos]
	p.pos++
	return int(uint64(v) % uint64(n))
}

// Exhausted reports whether every number has been used.
func (p *Program) Exhausted() bool { return p.pos >= len(p.Numbers) }

// SetRapidDefaults sets rapid's -rapid.checks and -rapid.steps to checks
// and steps unless the command line or RAPID_CHECKS / RAPID_STEPS set
// them. Call it from TestMain after flag.Parse. Under the race detector,
// which makes each check several times slower, it runs a quarter of the
// checks (at least 50): the race detector looks for races, which the
// concurrency tests provoke, not for more random sequences; CI runs the
// full count without it.
func SetRapidDefaults(checks, steps int) {
	if raceEnabled {
		checks = max(checks/4, 50)
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if _, env := os.LookupEnv("RAPID_CHECKS"); !set["rapid.checks"] && !env {
		_ = flag.Set("rapid.checks", strconv.Itoa(checks))
	}
	if _, env := os.LookupEnv("RAPID_STEPS"); !set["rapid.steps"] && !env {
		_ = flag.Set("rapid.steps", strconv.Itoa(steps))
	}
}
