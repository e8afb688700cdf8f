package explore

import (
	"slices"
)

// The declarative restatements of Surface.tla ("The rules said a second
// time"): each is checked over positions of the log, without the
// functions the actions use (openTurn, turnStartAt, stepOpen, callsFrom,
// regs, pending, locked, balancedCut, closers), so that a wrong shared
// definition cannot fool an action and its check alike. Positions here are
// 0-based indexes into the log (Surface.tla's are 1-based).

// noneBetween reports whether no event strictly between positions i and k
// has one of the types ts.
func noneBetween(l []Event, i, k int, ts ...string) bool {
	for m := i + 1; m < k; m++ {
		if slices.Contains(ts, l[m].T) {
			return false
		}
	}
	return true
}

// someBefore reports whether some position i < k holds an event of type t
// for which ok(i) holds.
func someBefore(l []Event, k int, t string, ok func(i int) bool) bool {
	for i := 0; i < k; i++ {
		if l[i].T == t && ok(i) {
			return true
		}
	}
	return false
}

// rep1TurnsDecl is REP1_TurnsDecl.
func rep1TurnsDecl(l []Event) bool {
	for k, e := range l {
		switch e.T {
		case "tstart":
			for i := 0; i < k; i++ {
				if l[i].T == "tstart" && noneBetween(l, i, k, "tend") {
					return false
				}
			}
		case "tend":
			if !someBefore(l, k, "tstart", func(i int) bool { return noneBetween(l, i, k, "tstart", "tend") }) {
				return false
			}
		}
	}
	return true
}

// rep2StepsDecl is REP2_StepsDecl.
func rep2StepsDecl(l []Event) bool {
	for k, e := range l {
		switch e.T {
		case "sstart":
			ok := someBefore(l, k, "tstart", func(i int) bool {
				if !noneBetween(l, i, k, "tstart", "tend") {
					return false
				}
				for j := i + 1; j < k; j++ {
					if l[j].T == "sstart" && noneBetween(l, j, k, "send") {
						return false
					}
				}
				return true
			})
			if !ok {
				return false
			}
		case "send":
			if !someBefore(l, k, "sstart", func(i int) bool { return noneBetween(l, i, k, "tstart", "tend", "send") }) {
				return false
			}
		}
	}
	return true
}

// rep3ResultsAnswerDecl is REP3_ResultsAnswerDecl.
func rep3ResultsAnswerDecl(l []Event) bool {
	for k, e := range l {
		if e.T != "result" || e.Op.Kind == "replace" {
			continue
		}
		ok := someBefore(l, k, "asst", func(i int) bool {
			if l[i].Call != e.Call || !noneBetween(l, i, k, "tstart", "tend", "send") {
				return false
			}
			for m := i + 1; m < k; m++ {
				if l[m].T == "result" && l[m].Call == e.Call {
					return false
				}
			}
			return true
		})
		if !ok {
			return false
		}
	}
	return true
}

// comp2BracketsDecl is COMP2_BracketsDecl.
func comp2BracketsDecl(l []Event) bool {
	for k, e := range l {
		if e.T == "cend" && !someBefore(l, k, "cstart", func(i int) bool { return noneBetween(l, i, k, "cstart", "cend") }) {
			return false
		}
	}
	return true
}

// comp5SummaryInBracketDecl is COMP5_SummaryInBracketDecl.
func (x *explorer) comp5SummaryInBracketDecl(l []Event) bool {
	for k, e := range l {
		if e.T != "summary" {
			continue
		}
		if !someBefore(l, k, "cstart", func(i int) bool { return noneBetween(l, i, k, "cstart", "cend", "summary") }) {
			return false
		}
		if e.Op.Kind != "replace" {
			return false
		}
		before := x.fold(l[:k])
		if !slices.Contains(before, e.Op.Start) || !slices.Contains(before, e.Op.End) {
			return false
		}
		for _, n := range shadows(before, e.Op) {
			if !slices.Contains(e.Src, n) {
				return false
			}
		}
	}
	return true
}

// comp5CommitEndsDecl is COMP5_CommitEndsDecl.
func comp5CommitEndsDecl(l []Event) bool {
	for k, e := range l {
		if e.T == "summary" && (k+1 >= len(l) || l[k+1].T != "cend") {
			return false
		}
	}
	return true
}

// balancedDecl is BalancedDecl: every tail of the first k surface nodes
// holds, for each call id, at least as many results as assistant messages
// calling it.
func balancedDecl(l []Event, s []int64, k int, calls []int) bool {
	for _, c := range calls {
		for j := 0; j < k; j++ {
			asks, answers := 0, 0
			for _, seq := range s[j:k] {
				if l[seq].Call != c {
					continue
				}
				switch l[seq].T {
				case "asst":
					asks++
				case "result":
					answers++
				}
			}
			if asks > answers {
				return false
			}
		}
	}
	return true
}

// comp4BalancedDecl is COMP4_BalancedDecl.
func (x *explorer) comp4BalancedDecl(l []Event) bool {
	for k, e := range l {
		if e.T != "summary" || e.Op.Kind != "replace" {
			continue
		}
		before := x.fold(l[:k])
		i, j := slices.Index(before, e.Op.Start), slices.Index(before, e.Op.End)
		if i < 0 || j < 0 || !balancedDecl(l, before, i, x.cfg.Calls) || !balancedDecl(l, before, j+1, x.cfg.Calls) {
			return false
		}
	}
	return true
}

// unansweredDecl is UnansweredDecl: the calls a recovery must answer.
func unansweredDecl(l []Event, s []int64) []int {
	var out []int
	for i, e := range l {
		if e.T != "asst" || e.Call == 0 || !slices.Contains(s, int64(i)) || !noneBetween(l, i, len(l), "tstart", "tend", "send") {
			continue
		}
		later := false
		for _, f := range l[i+1:] {
			if (f.T == "asst" || f.T == "result") && f.Call == e.Call {
				later = true
			}
		}
		if !later && !slices.Contains(out, e.Call) {
			out = append(out, e.Call)
		}
	}
	slices.Sort(out)
	return out
}

// allClosedDecl is AllClosedDecl.
func allClosedDecl(l []Event) bool {
	for i, e := range l {
		switch {
		case e.T == "tstart" && noneBetween(l, i, len(l), "tend"),
			e.T == "sstart" && noneBetween(l, i, len(l), "send", "tend"),
			e.T == "cstart" && noneBetween(l, i, len(l), "cend"):
			return false
		}
	}
	return true
}

// recoveryDecl is REP_RecoveryDecl for a recovery from l that appended cl.
func (x *explorer) recoveryDecl(l, cl []Event) bool {
	var got []int
	for _, e := range cl {
		if e.T == "result" {
			got = append(got, e.Call)
		}
	}
	slices.Sort(got)
	return slices.Equal(got, unansweredDecl(l, x.fold(l))) && allClosedDecl(append(slices.Clone(l), cl...))
}

// The witnesses: each is false (violated) in a state that reaches what it
// names.
func summaries(l []Event) []Event {
	var out []Event
	for _, e := range l {
		if e.T == "summary" {
			out = append(out, e)
		}
	}
	return out
}

var witnesses = map[string]func(l []Event) bool{
	"NotReached_MultiNodeCommit": func(l []Event) bool {
		for _, e := range summaries(l) {
			if len(e.Src) >= 2 {
				return false
			}
		}
		return true
	},
	"NotReached_CommitOverReplacement": func(l []Event) bool {
		for _, e := range summaries(l) {
			for _, x := range e.Src {
				if l[x].Op.Kind == "replace" {
					return false
				}
			}
		}
		return true
	},
	"NotReached_CommitFoldsCallAndResult": func(l []Event) bool {
		for _, e := range summaries(l) {
			for _, a := range e.Src {
				for _, r := range e.Src {
					if l[a].T == "asst" && l[a].Call != 0 && l[r].T == "result" && l[r].Call == l[a].Call {
						return false
					}
				}
			}
		}
		return true
	},
}
