package ops

import "pgregory.net/rapid"

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
