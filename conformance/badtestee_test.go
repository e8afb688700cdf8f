package conformance_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
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
// its tenth step: it exits, hangs or prints garbage.
func badTestee(mode string) {
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
			if steps == 10 {
				switch mode {
				case "crash":
					os.Exit(3)
				case "hang":
					time.Sleep(time.Hour)
				case "garbage":
					fmt.Println("this is not JSON")
					continue
				}
			}
			r, _ := m.Do(*req.Step)
			enc.Encode(r)
		case "bye":
			return
		}
	}
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
			os.Setenv("SURFACE_BAD_TESTEE", mode)
			defer os.Unsetenv("SURFACE_BAD_TESTEE")
			x := &conformance.Exec{Command: os.Args[0], Timeout: 300 * time.Millisecond}
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
	var junit strings.Builder
	if err := rep.WriteJUnit(&junit); err != nil || !strings.Contains(junit.String(), "<failure") {
		t.Fatalf("junit: %v %s", err, junit.String())
	}
}
