package conformance

import (
	"crypto/sha256"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Status of one vector.
const (
	StatusPass    = "pass"
	StatusFail    = "fail"    // a step's result differs from the expectation
	StatusError   = "error"   // the testee crashed, hung or answered garbage
	StatusSkipped = "skipped" // filtered by feature, or the testee skipped a step
)

// Outcome is the result of one vector.
type Outcome struct {
	ID     string `json:"id"`
	Tier   string `json:"tier"`
	Status string `json:"status"`
	// Step is the index of the step that failed, errored or was skipped.
	Step int `json:"step,omitempty"`
	// Signature summarises a failure so that a known failure can be
	// recognised ("fails differently" is a different signature).
	Signature string `json:"signature,omitempty"`
	// Detail is a human explanation: a diff, or the testee's failure.
	Detail string        `json:"detail,omitempty"`
	Time   time.Duration `json:"timeNs"`
}

// Report is the result of a run.
type Report struct {
	Testee   Hello     `json:"testee"`
	Outcomes []Outcome `json:"outcomes"`
	// Known lists the failures that the known-failures file expected.
	Known map[string]bool `json:"known,omitempty"`
	// Stale lists problems with the known-failures file: listed vectors
	// that passed, failed differently or were skipped.
	Stale []string `json:"stale,omitempty"`
	// Problems are reasons the run proves nothing, which fail it: no
	// vector selected, every vector skipped, no core feature, a testee
	// that kept timing out.
	Problems []string `json:"problems,omitempty"`
}

// Counts returns the number of vectors per status.
func (r *Report) Counts() map[string]int {
	c := map[string]int{}
	for _, o := range r.Outcomes {
		c[o.Status]++
	}
	return c
}

// OK reports whether the run passes: no failure or error that the
// known-failures file does not expect, and nothing stale in that file.
func (r *Report) OK() bool {
	for _, o := range r.Outcomes {
		if (o.Status == StatusFail || o.Status == StatusError) && !r.Known[o.ID] {
			return false
		}
	}
	return len(r.Stale) == 0 && len(r.Problems) == 0
}

// Level is the conformance level the run shows, as protobuf's conformance
// runner reports it: "recommended" when every vector of both tiers ran and
// passed, "required" when every required one did, else "none". A skipped
// or known-failing vector does not count as passed.
func (r *Report) Level() string {
	passed := map[string]bool{TierRequired: true, TierRecommended: true}
	ran := map[string]int{}
	for _, o := range r.Outcomes {
		ran[o.Tier]++
		if o.Status != StatusPass {
			passed[o.Tier] = false
		}
	}
	switch {
	case len(r.Problems) > 0 || ran[TierRequired] == 0 || !passed[TierRequired]:
		return "none"
	case ran[TierRecommended] > 0 && passed[TierRecommended]:
		return "recommended"
	}
	return "required"
}

// Options of a run.
type Options struct {
	Filter Filter
	// KnownFailures maps a vector id to its expected failure (ParseKnown):
	// a signature, with or without its digest, perhaps after the rows of
	// spec/DIFFERENCES.md that explain it.
	KnownFailures map[string]string
	// Progress, when set, gets a progress line now and then.
	Progress io.Writer
	// Verbose puts the whole failing step and the whole results wanted and
	// got in a failure's detail.
	Verbose bool
	// MaxTimeouts stops the run after this many vectors in a row timed out
	// (0: 3); the rest are reported as errors.
	MaxTimeouts int
}

// Run plays vectors against t.
func Run(vectors []Vector, t Testee, opts Options) (*Report, error) {
	hello, err := t.Hello()
	if err != nil {
		return nil, fmt.Errorf("testee: %w", err)
	}
	has := map[string]bool{}
	for _, f := range hello.Features {
		has[f] = true
	}
	rep := &Report{Testee: hello, Known: map[string]bool{}}
	if !has[FeatureCore] {
		rep.Problems = append(rep.Problems, "the testee does not declare the core feature")
		return rep, nil
	}
	var selected []Vector
	for _, v := range vectors {
		if opts.Filter.Match(v) {
			selected = append(selected, v)
		}
	}
	maxTimeouts := opts.MaxTimeouts
	if maxTimeouts <= 0 {
		maxTimeouts = 3
	}
	last := time.Now()
	timeouts := 0
	for i, v := range selected {
		if opts.Progress != nil && time.Since(last) > 2*time.Second {
			fmt.Fprintf(opts.Progress, "  ... %d/%d vectors (%s)\n", i, len(selected), v.ID)
			last = time.Now()
		}
		if timeouts >= maxTimeouts {
			rep.Outcomes = append(rep.Outcomes, Outcome{ID: v.ID, Tier: v.Tier, Status: StatusError, Signature: "error",
				Detail: fmt.Sprintf("not run: the testee timed out on %d vectors in a row", timeouts)})
			continue
		}
		o := runVector(v, t, has, opts)
		if o.Status == StatusError && strings.Contains(o.Detail, errTimeout) {
			timeouts++
		} else {
			timeouts = 0
		}
		rep.Outcomes = append(rep.Outcomes, o)
	}
	if timeouts >= maxTimeouts {
		rep.Problems = append(rep.Problems, fmt.Sprintf("the testee timed out on %d vectors in a row; the run stopped there", timeouts))
	}
	switch c := rep.Counts(); {
	case len(selected) == 0:
		rep.Problems = append(rep.Problems, "no vector was selected")
	case c[StatusSkipped] == len(selected):
		rep.Problems = append(rep.Problems, "the testee skipped every vector")
	}
	for id, sig := range opts.KnownFailures {
		o, found := rep.find(id)
		switch {
		case !found:
			if !opts.Filter.narrowed() {
				rep.Stale = append(rep.Stale, fmt.Sprintf("%s: listed as a known failure but there is no such vector", id))
			}
		case o.Status == StatusPass:
			rep.Stale = append(rep.Stale, fmt.Sprintf("%s: listed as a known failure but passes", id))
		case o.Status == StatusSkipped:
			rep.Stale = append(rep.Stale, fmt.Sprintf("%s: listed as a known failure but was skipped", id))
		case !ParseKnown(sig).Matches(o.Signature):
			rep.Stale = append(rep.Stale, fmt.Sprintf("%s: fails differently: %s (listed: %s)", id, o.Signature, sig))
		default:
			rep.Known[id] = true
		}
	}
	sort.Strings(rep.Stale)
	return rep, nil
}

func (r *Report) find(id string) (Outcome, bool) {
	for _, o := range r.Outcomes {
		if o.ID == id {
			return o, true
		}
	}
	return Outcome{}, false
}

func runVector(v Vector, t Testee, has map[string]bool, opts Options) Outcome {
	start := time.Now()
	o := Outcome{ID: v.ID, Tier: v.Tier}
	only := opts.Filter.Features
	for _, f := range v.Features {
		if !has[f] || (only != nil && !contains(only, f)) {
			o.Status, o.Detail = StatusSkipped, "needs feature "+f
			return o
		}
	}
	if err := t.Reset(); err != nil {
		o.Status, o.Detail, o.Signature = StatusError, "reset: "+err.Error(), "error"
		return o
	}
	for i, s := range v.Steps {
		o.Step = i
		ps, err := s.Prepared()
		if err != nil {
			o.Status, o.Detail, o.Signature = StatusError, fmt.Sprintf("step %d (%s): %v", i, s.Op, err), "error"
			o.Time = time.Since(start)
			return o
		}
		resp, err := t.Do(ps)
		if err != nil {
			o.Status, o.Detail, o.Signature = StatusError, fmt.Sprintf("step %d (%s): %v", i, s.Op, err), "error"
			o.Time = time.Since(start)
			return o
		}
		if resp.Type == "skipped" || resp.Type == "unsupported" {
			o.Status, o.Detail = StatusSkipped, fmt.Sprintf("step %d (%s) %s: %s", i, s.Op, resp.Type, resp.Reason)
			o.Time = time.Since(start)
			return o
		}
		if s.Expect == nil {
			continue
		}
		want, got := normalize(*s.Expect), normalize(resp.Result)
		if !reflect.DeepEqual(want, got) {
			o.Status = StatusFail
			o.Signature = signature(i, s.Op, *s.Expect, resp.Result)
			o.Detail = fmt.Sprintf("first divergence at step %d (%s); result (-want +got):\n%s", i, describe(s, opts.Verbose), cmp.Diff(want, got))
			if opts.Verbose {
				w, _ := json.MarshalIndent(s.Expect, "", "  ")
				g, _ := json.MarshalIndent(resp.Result, "", "  ")
				o.Detail += fmt.Sprintf("\nwanted:\n%s\ngot:\n%s", w, g)
			}
			o.Time = time.Since(start)
			return o
		}
	}
	o.Status, o.Step, o.Time = StatusPass, 0, time.Since(start)
	return o
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func short(r Result) string {
	if r.Error != "" {
		return r.Error
	}
	return "success"
}

// signature summarises a failure so that a known failure is recognised
// only when the same step gives the same wrong answer: the step, what was
// wanted and what came, and a digest of both results (two different wrong
// successes differ).
func signature(i int, op string, want, got Result) string {
	w, _ := json.Marshal(normalize(want))
	g, _ := json.Marshal(normalize(got))
	sum := sha256.Sum256(append(append(w, 0), g...))
	f := Failure{Step: i, Op: op, Want: short(want), Got: short(got), Digest: fmt.Sprintf("%x", sum[:6])}
	if f.Want == f.Got {
		// The same outcome, different details: name the members that
		// differ, so the line never reads "want X, got X".
		f.Differ = differing(want, got)
	}
	return f.String()
}

// differing lists the members of two results whose values differ.
func differing(want, got Result) []string {
	w, _ := normalize(want).(map[string]any)
	g, _ := normalize(got).(map[string]any)
	var out []string
	for k, v := range w {
		if !reflect.DeepEqual(v, g[k]) {
			out = append(out, k)
		}
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// describe is the step as JSON, cut at 300 bytes unless verbose.
func describe(s Step, verbose bool) string {
	b, _ := json.Marshal(s)
	if len(b) > 300 && !verbose {
		b = append(b[:300], "..."...)
	}
	return string(b)
}

// normalize turns a result into plain JSON values, so results compare by
// value: numbers by value, objects regardless of member order.
func normalize(r Result) any {
	b, _ := json.Marshal(r)
	var v any
	_ = json.Unmarshal(b, &v)
	// Parse embedded event texts too (they are raw JSON already).
	return v
}

// WriteText writes a human report: every failure with its first
// divergence, then a summary line.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "testee %s %s (protocol %d, features %s)\n", r.Testee.Name, r.Testee.Version, r.Testee.Protocol, strings.Join(r.Testee.Features, ","))
	for _, o := range r.Outcomes {
		if o.Status != StatusFail && o.Status != StatusError {
			continue
		}
		known := ""
		if r.Known[o.ID] {
			known = " (known failure)"
		}
		fmt.Fprintf(w, "\n%s %s%s\n%s\n", strings.ToUpper(o.Status), o.ID, known, indent(o.Detail))
	}
	for _, s := range r.Stale {
		fmt.Fprintf(w, "\nSTALE known failure: %s\n", s)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "\nPROBLEM: %s\n", p)
	}
	c := r.Counts()
	fmt.Fprintf(w, "\n%d vectors: %d passed, %d failed, %d errored, %d skipped\n", len(r.Outcomes), c[StatusPass], c[StatusFail], c[StatusError], c[StatusSkipped])
	for _, tier := range []string{TierRequired, TierRecommended} {
		n, pass := 0, 0
		for _, o := range r.Outcomes {
			if o.Tier == tier {
				n++
				if o.Status == StatusPass {
					pass++
				}
			}
		}
		fmt.Fprintf(w, "%s vectors: %d of %d passed\n", tier, pass, n)
	}
	fmt.Fprintf(w, "conformance level: %s\n", r.Level())
	if r.OK() {
		fmt.Fprintln(w, "PASS")
	} else {
		fmt.Fprintln(w, "FAIL")
	}
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// WriteJSON writes the report as JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

type junitSuite struct {
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      float64       `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML.
func (r *Report) WriteJUnit(w io.Writer) error {
	c := r.Counts()
	suite := junitSuite{Name: "surface conformance: " + r.Testee.Name, Tests: len(r.Outcomes), Failures: c[StatusFail], Errors: c[StatusError], Skipped: c[StatusSkipped]}
	for _, o := range r.Outcomes {
		jc := junitCase{Name: o.ID, Classname: strings.SplitN(o.ID, ".", 3)[0] + "." + strings.SplitN(o.ID+"..", ".", 3)[1], Time: o.Time.Seconds()}
		switch o.Status {
		case StatusFail:
			jc.Failure = &junitMessage{Message: o.Signature, Body: o.Detail}
		case StatusError:
			jc.Error = &junitMessage{Message: o.Signature, Body: o.Detail}
		case StatusSkipped:
			jc.Skipped = &junitMessage{Message: o.Detail}
		}
		suite.Cases = append(suite.Cases, jc)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	return enc.Encode(suite)
}

// KnownFailures is the form of a known-failures file.
type KnownFailures struct {
	Comment  string            `json:"$comment,omitempty"`
	Failures map[string]string `json:"failures"`
}

// ReadKnownFailures reads a known-failures file. A missing file is an
// error: a typo in its name must not make every failure unexpected.
func ReadKnownFailures(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var k KnownFailures
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if k.Failures == nil {
		k.Failures = map[string]string{}
	}
	return k.Failures, nil
}

// WriteKnownFailures writes the current failures of r as a known-failures
// file (--fix).
func (r *Report) WriteKnownFailures(path string) error {
	k := KnownFailures{Comment: "Vectors this testee is known to fail, with the failure signature. Written by `conformance run --fix`.", Failures: map[string]string{}}
	for _, o := range r.Outcomes {
		if o.Status == StatusFail || o.Status == StatusError {
			k.Failures[o.ID] = o.Signature
		}
	}
	b, _ := json.MarshalIndent(k, "", "  ")
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// FailuresOf reads an earlier report written with --format json and
// returns the ids of the vectors that failed or errored in it.
func FailuresOf(path string) (map[string]bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s is not a JSON report: %w", path, err)
	}
	ids := map[string]bool{}
	for _, o := range rep.Outcomes {
		if o.Status == StatusFail || o.Status == StatusError {
			ids[o.ID] = true
		}
	}
	return ids, nil
}

// ReadReport reads a report written with --format json.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s is not a JSON report: %w", path, err)
	}
	return &rep, nil
}
