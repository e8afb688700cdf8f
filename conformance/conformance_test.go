package conformance_test

import (
	"strings"
	"testing"

	"github.com/surfacelog/surface/conformance"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/spec"
)

// TestBuiltinTesteesPass: the implementation and the model pass every
// embedded vector (in process).
func TestBuiltinTesteesPass(t *testing.T) {
	vectors, err := conformance.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if len(vectors) < 500 {
		t.Fatalf("only %d vectors", len(vectors))
	}
	for _, m := range []*conformance.Machine{conformance.NewImplMachine(), conformance.NewModelMachine()} {
		rep, err := conformance.Run(vectors, m, conformance.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() || rep.Counts()[conformance.StatusPass] != len(vectors) {
			var b strings.Builder
			rep.WriteText(&b)
			t.Fatalf("%s:\n%s", rep.Testee.Name, b.String())
		}
	}
}

// TestCoverage: every MUST rule that the protocol can express, and every
// error code a step or a file handed to a testee can provoke, is covered
// by at least one vector. The rules left out are checked by Go tests:
// SURF-26 to SURF-28 are implementation requirements; STORE-4, STORE-6
// and STORE-10 to STORE-13, STORE-16 and STORE-17 are about locks, I/O
// faults, sync policies, the validator, a shared database, contexts and
// batches, which no file shows (STORE-18's checkpoints are covered by the
// vectors that hand a file or a database one beside the log: any reader
// may ignore them, so those show only that the log stays the log;
// impl/persist and the validator's tests check the rest, and
// persist.checkpoint_unusable with it). The persist codes left out are those of
// locks, conflicts, I/O, closed stores and contexts. The IMP rules and the
// import codes concern other harnesses' logs, which no protocol step
// reads: impl/importer tests them.
func TestCoverage(t *testing.T) {
	vectors, _ := conformance.Embedded()
	rules, codes := conformance.Coverage(vectors)
	ids := map[string]bool{}
	for _, v := range vectors {
		if ids[v.ID] {
			t.Errorf("duplicate id %s", v.ID)
		}
		ids[v.ID] = true
	}
	notExpressible := map[string]bool{"SURF-26": true, "SURF-27": true, "SURF-28": true, "STORE-4": true, "STORE-6": true,
		"STORE-10": true, "STORE-11": true, "STORE-12": true, "STORE-13": true, "STORE-16": true, "STORE-17": true,
		"COMP-10": true, // a library default on top of COMP-8: tested in impl/compaction
		"PROV-2":  true} // what an adapter sends a provider: tested in impl/providers
	for _, r := range spec.Rules() {
		if !notExpressible[r.ID] && !strings.HasPrefix(r.ID, "IMP-") && rules[r.ID] == 0 {
			t.Errorf("rule %s is covered by no vector", r.ID)
		}
	}
	noFileShows := map[event.Code]bool{event.CodePersistLocked: true, event.CodePersistConflict: true, event.CodePersistIO: true,
		event.CodePersistClosed: true, event.CodePersistCancelled: true, event.CodePersistCheckpointUnusable: true,
		event.CodeConvertNotConvertible: true} // a conversion: no protocol step converts (tested in impl/convert)
	for _, c := range event.Codes() {
		if !noFileShows[c] && !strings.HasPrefix(string(c), "import.") && codes[string(c)] == 0 {
			t.Errorf("code %s is produced by no vector", c)
		}
	}
}

// TestServeAnswersAsProtocolSays: the testee side answers a reset with
// exactly {"type":"ok"} (PROTOCOL.md), with no result member.
func TestServeAnswersAsProtocolSays(t *testing.T) {
	var out strings.Builder
	in := strings.NewReader(`{"type":"hello","protocol":1}` + "\n" + `{"type":"reset"}` + "\n" + `{"type":"bye"}` + "\n")
	if err := conformance.Serve(conformance.NewImplMachine(), in, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || lines[1] != `{"type":"ok"}` {
		t.Fatalf("answers:\n%s", out.String())
	}
}
