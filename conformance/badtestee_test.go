package conformance_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/surfacelog/surface/conformance"
)

// TestMain lets the test binary act as a misbehaving testee.
func TestMain(m *testing.M) {
	if mode := os.Getenv("SURFACE_BAD_TESTEE"); mode != "" {
		badTestee(mode)
		return
	}
	os.Exit(m.Run())
}

// badTestee is a correct testee (the implementation) that misbehaves on
// its tenth step: it exits, hangs (also with a child process holding its
// stderr, or on every step from then on) or prints garbage; or it answers
// every step with empty messages, an unknown member, or "skipped".
func badTestee(mode string) {
	if mode == "hang-with-child" {
		child := exec.Command("sleep", "300")
		child.Stderr = os.Stderr // holds the runner's stderr pipe open
		child.Start()
		os.WriteFile(os.Getenv("SURFACE_BAD_TESTEE_PID"), []byte(strconv.Itoa(child.Process.Pid)), 0o644)
	}
	m := conformance.NewImplMachine()
	in := bufio.NewReader(os.Stdin)
	enc := json.NewEncoder(os.Stdout)
	steps := 0
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var req conformance.Request
		json.Unmarshal(line, &req)
		switch req.Type {
		case "hello":
			h, _ := m.Hello()
			h.Name = "bad-" + mode
			enc.Encode(h)
		case "reset":
			m.Reset()
			enc.Encode(conformance.Response{Type: "ok"})
		case "step":
			steps++
			if steps == 10 || mode == "hang-always" {
				switch mode {
				case "crash":
					os.Exit(3)
				case "hang", "hang-with-child", "hang-always":
					time.Sleep(time.Hour)
				case "garbage":
					fmt.Println("this is not JSON")
					continue
				}
			}
			r, _ := m.Do(*req.Step)
			switch mode {
			case "empty-messages":
				if r.Result.Messages != nil {
					r.Result.Messages = json.RawMessage(`[]`)
				}
			case "unknown-member":
				b, _ := json.Marshal(r)
				fmt.Println(strings.Replace(string(b), `"result":{`, `"result":{"extra":1,`, 1))
				continue
			case "skip-all":
				r = conformance.Response{Type: "skipped", Reason: "not implemented"}
			}
			enc.Encode(r)
		case "bye":
			return
		}
	}
}

// requestTimeout is the per-request timeout the tests give a testee that
// may hang: long enough that a race-enabled testee answers in time on a
// busy machine (SURFACE_TEST_TIMEOUT overrides it, e.g. "20s" on a very
// slow one), short enough that a hang costs a few seconds. Tests that
// expect a hang run in parallel, so their waits overlap.
func requestTimeout(t testing.TB) time.Duration {
	if v := os.Getenv("SURFACE_TEST_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SURFACE_TEST_TIMEOUT: %v", err)
		}
		return d
	}
	return 5 * time.Second
}

// TestBadTestees: a testee that crashes, hangs or writes non-JSON gets its
// vector marked errored with a clear message, is restarted, and the run
// goes on to the end.
func TestBadTestees(t *testing.T) {
	vectors, _ := conformance.Embedded()
	var some []conformance.Vector
	for _, v := range vectors {
		if strings.HasPrefix(v.ID, "surface.edge.") && len(some) < 6 {
			some = append(some, v)
		}
	}
	for _, mode := range []string{"crash", "hang", "garbage"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			x := &conformance.Exec{Command: "SURFACE_BAD_TESTEE=" + mode + " exec '" + os.Args[0] + "'", Timeout: requestTimeout(t)}
			defer x.Close()
			rep, err := conformance.Run(some, x, conformance.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c := rep.Counts()
			if len(rep.Outcomes) != len(some) || c[conformance.StatusError] == 0 || c[conformance.StatusPass] == 0 {
				t.Fatalf("outcomes %v", c)
			}
			want := map[string]string{"crash": "testee exited", "hang": "did not answer within", "garbage": "not a protocol message"}[mode]
			for _, o := range rep.Outcomes {
				if o.Status == conformance.StatusError && !strings.Contains(o.Detail, want) {
					t.Fatalf("error detail %q does not say %q", o.Detail, want)
				}
			}
		})
	}
}

// TestKnownFailures: a listed failure that happens as listed is accepted;
// one that passes, fails differently or is missing makes the run fail.
func TestKnownFailures(t *testing.T) {
	vectors, _ := conformance.Embedded()
	v := vectors[0]
	broken := v
	broken.Steps = append([]conformance.Step(nil), v.Steps...)
	last := broken.Steps[len(broken.Steps)-1]
	exp := *last.Expect
	exp.Error = "replace.reversed"
	last.Expect = &exp
	broken.Steps[len(broken.Steps)-1] = last
	rep, _ := conformance.Run([]conformance.Vector{broken}, conformance.NewImplMachine(), conformance.Options{})
	if rep.OK() {
		t.Fatal("a failing vector passed")
	}
	sig := rep.Outcomes[0].Signature
	rep, _ = conformance.Run([]conformance.Vector{broken}, conformance.NewImplMachine(), conformance.Options{KnownFailures: map[string]string{v.ID: sig}})
	if !rep.OK() {
		t.Fatalf("a known failure failed the run: %v", rep.Stale)
	}
	rep, _ = conformance.Run([]conformance.Vector{v}, conformance.NewImplMachine(), conformance.Options{KnownFailures: map[string]string{v.ID: sig}})
	if rep.OK() || len(rep.Stale) != 1 || !strings.Contains(rep.Stale[0], "passes") {
		t.Fatalf("a stale known failure was not reported: %v", rep.Stale)
	}
	rep, _ = conformance.Run([]conformance.Vector{broken}, conformance.NewImplMachine(), conformance.Options{KnownFailures: map[string]string{v.ID: "step 0 append: want x, got y"}})
	if rep.OK() || len(rep.Stale) != 1 || !strings.Contains(rep.Stale[0], "differently") {
		t.Fatalf("failing differently was not reported: %v", rep.Stale)
	}
	// An entry that names the rows explaining it matches the same failure;
	// without its digest it matches any results with the same step, op,
	// outcomes and members (a testee whose results carry wall-clock times).
	k := conformance.ParseKnown(sig)
	k.Rows = []string{"D2", "D7"}
	rep, _ = conformance.Run([]conformance.Vector{broken}, conformance.NewImplMachine(), conformance.Options{KnownFailures: map[string]string{v.ID: k.String()}})
	if !rep.OK() || !strings.HasPrefix(k.String(), "D2, D7: step ") {
		t.Fatalf("an entry with rows (%q) failed the run: %v", k.String(), rep.Stale)
	}
	k.Failure.Digest = ""
	rep, _ = conformance.Run([]conformance.Vector{broken}, conformance.NewImplMachine(), conformance.Options{KnownFailures: map[string]string{v.ID: k.String()}})
	if !rep.OK() {
		t.Fatalf("an entry without a digest (%q) failed the run: %v", k.String(), rep.Stale)
	}
	k.Failure.Digest = "000000000000"
	rep, _ = conformance.Run([]conformance.Vector{broken}, conformance.NewImplMachine(), conformance.Options{KnownFailures: map[string]string{v.ID: k.String()}})
	if rep.OK() || len(rep.Stale) != 1 || !strings.Contains(rep.Stale[0], "differently") {
		t.Fatalf("an entry with another digest matched: %v", rep.Stale)
	}
	k.Failure.Digest = ""
	rep, _ = conformance.Run([]conformance.Vector{v}, conformance.NewImplMachine(), conformance.Options{KnownFailures: map[string]string{v.ID: k.String()}})
	if rep.OK() || len(rep.Stale) != 1 || !strings.Contains(rep.Stale[0], "passes") {
		t.Fatalf("a passing vector listed without a digest was not stale: %v", rep.Stale)
	}
	// The old form that accepted any failure is gone: it predicts nothing.
	rep, _ = conformance.Run([]conformance.Vector{broken}, conformance.NewImplMachine(), conformance.Options{KnownFailures: map[string]string{v.ID: "differs: D2"}})
	if rep.OK() {
		t.Fatal("a differs: entry, which predicts no outcome, was accepted")
	}
	// The same step and op, both answers successes, but different ones:
	// that is failing differently too.
	other := broken
	other.Steps = append([]conformance.Step(nil), broken.Steps...)
	lastOther := *other.Steps[len(other.Steps)-1].Expect
	lastOther.Error = ""
	surface := []int64{42}
	lastOther.Surface = &surface
	other.Steps[len(other.Steps)-1].Expect = &lastOther
	third := other
	third.Steps = append([]conformance.Step(nil), other.Steps...)
	lastThird := lastOther
	surface3 := []int64{43}
	lastThird.Surface = &surface3
	third.Steps[len(third.Steps)-1].Expect = &lastThird
	rep, _ = conformance.Run([]conformance.Vector{other}, conformance.NewImplMachine(), conformance.Options{})
	sigOther := rep.Outcomes[0].Signature
	rep, _ = conformance.Run([]conformance.Vector{third}, conformance.NewImplMachine(), conformance.Options{KnownFailures: map[string]string{v.ID: sigOther}})
	if rep.OK() || len(rep.Stale) != 1 || !strings.Contains(rep.Stale[0], "differently") {
		t.Fatalf("a different wrong success matched the known failure: %q vs %v", sigOther, rep.Stale)
	}
	var junit strings.Builder
	if err := rep.WriteJUnit(&junit); err != nil || !strings.Contains(junit.String(), "<failure") {
		t.Fatalf("junit: %v %s", err, junit.String())
	}
}

func someVectors(n int, prefix string) []conformance.Vector {
	vectors, _ := conformance.Embedded()
	var some []conformance.Vector
	for _, v := range vectors {
		if strings.HasPrefix(v.ID, prefix) && len(some) < n {
			some = append(some, v)
		}
	}
	return some
}

// badRun runs vectors against the test binary acting as a bad testee.
func badRun(t *testing.T, mode string, vectors []conformance.Vector, opts conformance.Options, env ...string) *conformance.Report {
	t.Helper()
	argv := append([]string{"env", "SURFACE_BAD_TESTEE=" + mode}, env...)
	x := &conformance.Exec{Argv: append(argv, os.Args[0]), Timeout: requestTimeout(t)}
	defer x.Close()
	rep, err := conformance.Run(vectors, x, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestRunnerNeverPassesOnNothing: a run that tests nothing fails: no
// vector selected, every vector skipped (with and without a filter), a
// testee without the core feature.
func TestRunnerNeverPassesOnNothing(t *testing.T) {
	some := someVectors(5, "surface.edge.")
	rep, _ := conformance.Run(some, conformance.NewImplMachine(), conformance.Options{Filter: conformance.Filter{Prefix: "no.such."}})
	if rep.OK() || len(rep.Problems) == 0 || !strings.Contains(rep.Problems[0], "no vector") {
		t.Errorf("a filter selecting nothing passed: %+v", rep.Problems)
	}
	rep = badRun(t, "skip-all", some, conformance.Options{})
	if rep.OK() || rep.Level() != "none" || !strings.Contains(strings.Join(rep.Problems, ";"), "skipped every vector") {
		t.Errorf("a testee skipping everything passed: %+v %v", rep.Problems, rep.Counts())
	}
	// The same with a filter that narrows the run: every selected vector
	// skipped is nothing tested, though vectors outside the filter exist.
	mixed := append(someVectors(3, "repair."), some...)
	rep = badRun(t, "skip-all", mixed, conformance.Options{Filter: conformance.Filter{Prefix: "surface.edge."}})
	if rep.OK() || !strings.Contains(strings.Join(rep.Problems, ";"), "skipped every vector") || len(rep.Outcomes) != len(some) {
		t.Errorf("a testee skipping every selected vector passed under a filter: %+v %v (%d outcomes)", rep.Problems, rep.Counts(), len(rep.Outcomes))
	}
	rep, _ = conformance.Run(some, noCore{conformance.NewImplMachine()}, conformance.Options{})
	if rep.OK() || !strings.Contains(strings.Join(rep.Problems, ";"), "core") {
		t.Errorf("a testee without the core feature passed: %+v", rep.Problems)
	}
}

type noCore struct{ *conformance.Machine }

func (n noCore) Hello() (conformance.Hello, error) {
	h, err := n.Machine.Hello()
	h.Features = []string{conformance.FeatureRepair}
	return h, err
}

// TestRunnerCatchesLazyTestees: a testee answering empty messages fails;
// a member the protocol does not have is a protocol error, and errored
// vectors fail the run.
func TestRunnerCatchesLazyTestees(t *testing.T) {
	some := someVectors(4, "surface.edge.append.user")
	rep := badRun(t, "empty-messages", some, conformance.Options{})
	if rep.OK() || rep.Counts()[conformance.StatusFail] == 0 {
		t.Errorf("a testee answering messages: [] passed: %v", rep.Counts())
	}
	rep = badRun(t, "unknown-member", some, conformance.Options{})
	if rep.OK() || rep.Counts()[conformance.StatusError] == 0 || !strings.Contains(rep.Outcomes[0].Detail, "not a protocol message") {
		t.Errorf("an unknown member in a result was accepted: %v %q", rep.Counts(), rep.Outcomes[0].Detail)
	}
}

// TestHungTesteeGroupKilled: a hung testee is killed with its whole
// process group, even when a child of it holds the runner's pipes, and the
// run goes on.
func TestHungTesteeGroupKilled(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	rep := badRun(t, "hang-with-child", someVectors(4, "surface.edge."), conformance.Options{}, "SURFACE_BAD_TESTEE_PID="+pidFile)
	if rep.Counts()[conformance.StatusError] == 0 {
		t.Fatalf("no vector errored: %v", rep.Counts())
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	// The group was sent SIGKILL before the run went on; the child is
	// gone once the kernel has reaped it.
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the testee's child %d outlived it", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFailFastAfterTimeouts: after 3 vectors in a row time out, the rest
// are not run, and the run fails with the reason.
func TestFailFastAfterTimeouts(t *testing.T) {
	t.Parallel()
	some := someVectors(12, "surface.edge.")
	rep := badRun(t, "hang-always", some, conformance.Options{MaxTimeouts: 3})
	if rep.OK() || !strings.Contains(strings.Join(rep.Problems, ";"), "timed out on 3 vectors in a row") {
		t.Fatalf("problems %v", rep.Problems)
	}
	notRun := 0
	for _, o := range rep.Outcomes {
		if strings.Contains(o.Detail, "not run") {
			notRun++
		}
	}
	if notRun != len(some)-3 {
		t.Fatalf("%d vectors not run, want %d", notRun, len(some)-3)
	}
}

// TestRunnerSelection: --rule, --rerun (the failures of an earlier JSON
// report), the conformance level, --verbose.
func TestRunnerSelection(t *testing.T) {
	vectors, _ := conformance.Embedded()
	rep, _ := conformance.Run(vectors, conformance.NewImplMachine(), conformance.Options{Filter: conformance.Filter{Rule: "SURF-13"}})
	if !rep.OK() || len(rep.Outcomes) == 0 || len(rep.Outcomes) == len(vectors) {
		t.Fatalf("rule filter: %d of %d vectors", len(rep.Outcomes), len(vectors))
	}
	for _, o := range rep.Outcomes {
		for _, v := range vectors {
			if v.ID == o.ID && !strings.Contains(strings.Join(v.Rules, ","), "SURF-13") {
				t.Errorf("%s does not cover SURF-13", o.ID)
			}
		}
	}
	full, _ := conformance.Run(vectors[:40], conformance.NewImplMachine(), conformance.Options{})
	if full.Level() != "recommended" && full.Level() != "required" {
		t.Errorf("level %s", full.Level())
	}
	// A report in which one vector failed: --rerun runs exactly that one.
	broken := vectors[3]
	broken.Steps = append([]conformance.Step(nil), broken.Steps...)
	last := *broken.Steps[0].Expect
	last.Error = "seq.not_contiguous"
	broken.Steps[0].Expect = &last
	rep, _ = conformance.Run([]conformance.Vector{vectors[2], broken, vectors[4]}, conformance.NewImplMachine(), conformance.Options{Verbose: true})
	if rep.OK() || rep.Level() != "none" || !strings.Contains(rep.Outcomes[1].Detail, "wanted:") {
		t.Fatalf("a failing run: %v level %s", rep.Counts(), rep.Level())
	}
	path := filepath.Join(t.TempDir(), "report.json")
	f, _ := os.Create(path)
	rep.WriteJSON(f)
	f.Close()
	ids, err := conformance.FailuresOf(path)
	if err != nil || len(ids) != 1 || !ids[broken.ID] {
		t.Fatalf("failures of the report: %v %v", ids, err)
	}
	rep, _ = conformance.Run(vectors, conformance.NewImplMachine(), conformance.Options{Filter: conformance.Filter{IDs: ids}})
	if len(rep.Outcomes) != 1 || rep.Outcomes[0].ID != broken.ID {
		t.Fatalf("rerun ran %d vectors", len(rep.Outcomes))
	}
}

// TestExecCommandLine: --exec is a shell command line, so a path with a
// space works when quoted, and arguments and variables pass through.
func TestExecCommandLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dir with space")
	os.MkdirAll(dir, 0o755)
	link := filepath.Join(dir, "testee bin")
	if err := os.Symlink(os.Args[0], link); err != nil {
		t.Fatal(err)
	}
	x := &conformance.Exec{Command: `SURFACE_BAD_TESTEE=garbage '` + link + `' -test.run=none`, Timeout: requestTimeout(t)}
	defer x.Close()
	rep, err := conformance.Run(someVectors(3, "surface.edge."), x, conformance.Options{})
	if err != nil || rep.Testee.Name != "bad-garbage" || rep.Counts()[conformance.StatusPass] == 0 {
		t.Fatalf("quoted command line: %v %+v %v", err, rep.Testee, rep.Counts())
	}
}
