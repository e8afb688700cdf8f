package conformance

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Failure is a failure signature taken apart: the step that failed, its op,
// the outcome wanted and the outcome got (an error code, or "success"), the
// members of the two results that differ when both are the same outcome,
// and a digest of both results (two different wrong successes differ).
//
// Its text form, String, is the Signature of an Outcome:
//
//	step 3 append: want sources.not_earlier, got replace.start_not_on_surface [dc016217054d]
//	step 1 store_file: want success, got success (file differ) [809f072867a6]
type Failure struct {
	Step   int
	Op     string
	Want   string
	Got    string
	Differ []string
	// Digest is the hex digest of both results; "" in a known failure
	// means any results with this step, op, outcomes and members match
	// (for a testee whose results carry wall-clock times).
	Digest string
}

var failureRE = regexp.MustCompile(`^step (\d+) ([a-z_]+): want ([^ ,]+), got ([^ ,]+)(?: \(([a-zA-Z, ]+) differ\))?(?: \[([0-9a-f]+)\])?$`)

// ParseFailure parses a failure signature (Failure.String).
func ParseFailure(s string) (Failure, error) {
	m := failureRE.FindStringSubmatch(s)
	if m == nil {
		return Failure{}, fmt.Errorf("not a failure signature: %q", s)
	}
	step, err := strconv.Atoi(m[1])
	if err != nil {
		return Failure{}, fmt.Errorf("not a failure signature: %q", s)
	}
	f := Failure{Step: step, Op: m[2], Want: m[3], Got: m[4], Digest: m[6]}
	if m[5] != "" {
		f.Differ = strings.Split(m[5], ", ")
	}
	return f, nil
}

// String is the signature's text.
func (f Failure) String() string {
	s := f.Short()
	if f.Digest != "" {
		s += " [" + f.Digest + "]"
	}
	return s
}

// Short is the signature's text without the digest.
func (f Failure) Short() string {
	s := fmt.Sprintf("step %d %s: want %s, got %s", f.Step, f.Op, f.Want, f.Got)
	if len(f.Differ) > 0 {
		s += " (" + strings.Join(f.Differ, ", ") + " differ)"
	}
	return s
}

// Predicts reports whether an actual failure is the one f predicts: the
// same step, op, outcomes and differing members, and, when f has a digest,
// the same digest.
func (f Failure) Predicts(actual Failure) bool {
	return f.Step == actual.Step && f.Op == actual.Op && f.Want == actual.Want && f.Got == actual.Got &&
		slices.Equal(f.Differ, actual.Differ) && (f.Digest == "" || f.Digest == actual.Digest)
}

// Known is one entry of a known-failures file: the rows of
// spec/DIFFERENCES.md that explain the failure (none for a testee that is
// not the seed system) and the failure they predict. Its text form is
// "D2, D7: " followed by the signature, or the signature alone.
type Known struct {
	Rows    []string
	Failure Failure
	// Raw is the entry's signature text when it is not a failure signature
	// ("error" for a vector the testee is known to error on); it then
	// matches an outcome with exactly that signature.
	Raw string
}

var rowsRE = regexp.MustCompile(`^(D[0-9]+(?:, D[0-9]+)*): `)

// ParseKnown parses an entry of a known-failures file.
func ParseKnown(s string) Known {
	var k Known
	if m := rowsRE.FindStringSubmatch(s); m != nil {
		k.Rows = strings.Split(m[1], ", ")
		s = s[len(m[0]):]
	}
	f, err := ParseFailure(s)
	if err != nil {
		k.Raw = s
		return k
	}
	k.Failure = f
	return k
}

// String is the entry's text.
func (k Known) String() string {
	sig := k.Raw
	if sig == "" {
		sig = k.Failure.String()
	}
	if len(k.Rows) == 0 {
		return sig
	}
	return strings.Join(k.Rows, ", ") + ": " + sig
}

// Matches reports whether an outcome's signature is the failure k predicts.
func (k Known) Matches(signature string) bool {
	if k.Raw != "" {
		return signature == k.Raw
	}
	f, err := ParseFailure(signature)
	return err == nil && k.Failure.Predicts(f)
}
