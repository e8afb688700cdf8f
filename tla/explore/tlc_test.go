package explore

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/ops"
	"github.com/surfacelog/surface/internal/traffic"
)

// tlc runs TLC in dir on spec with config and returns its output.
func tlc(t *testing.T, jar, dir, config, spec string, args ...string) (string, error) {
	t.Helper()
	argv := append([]string{"-Xss64m", "-XX:+UseParallelGC", "-cp", jar, "tlc2.TLC", "-noGenerateSpecTE", "-metadir", t.TempDir()}, args...)
	cmd := exec.Command("java", append(argv, "-config", config, spec)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// needTLC returns the path of tla2tools.jar: TLA2TOOLS_JAR, else the
// project's shared copy at ../shared/tools/tla2tools.jar beside the
// repository (never copied into it). Without one the test is skipped,
// except under CI=true, where a missing jar fails it.
func needTLC(t *testing.T) string {
	jar := os.Getenv("TLA2TOOLS_JAR")
	if jar == "" {
		if abs, err := filepath.Abs("../../../shared/tools/tla2tools.jar"); err == nil {
			if _, err := os.Stat(abs); err == nil {
				jar = abs
			}
		}
	}
	if jar == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but no tla2tools.jar: set TLA2TOOLS_JAR or provide ../shared/tools/tla2tools.jar")
		}
		t.Skip("no tla2tools.jar (TLA2TOOLS_JAR, or ../shared/tools/tla2tools.jar): TLC is not available (the Go explorer checks the same state spaces)")
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Fatalf("tla2tools.jar at %s but no java: %v", jar, err)
	}
	return jar
}

// TestTLCModelConfigs runs TLC on every model config: nothing is
// violated, and the distinct and generated state counts and the digest of
// the set of states (read off TLC's -dump) are the ones committed in
// counts.json, which the Go explorer also finds.
func TestTLCModelConfigs(t *testing.T) {
	jar := needTLC(t)
	re := regexp.MustCompile(`(\d+) states generated, (\d+) distinct states found, 0 states left on queue`)
	for name, w := range readCounts(t) {
		if w.Violation != "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			dump := filepath.Join(t.TempDir(), "states")
			out, err := tlc(t, jar, "..", name+".cfg", "Surface.tla", "-workers", "2", "-dump", dump)
			m := re.FindStringSubmatch(out)
			if err != nil || m == nil || !strings.Contains(out, "No error has been found") {
				t.Fatalf("TLC failed (%v):\n%s", err, tail(out))
			}
			gen, _ := strconv.Atoi(m[1])
			distinct, _ := strconv.Atoi(m[2])
			text, err := os.ReadFile(dump + ".dump")
			if err != nil {
				t.Fatal(err)
			}
			states, err := ParseDump(string(text))
			if err != nil {
				t.Fatal(err)
			}
			digest := Digest(states)
			t.Logf("TLC: %d distinct, %d generated, digest %s", distinct, gen, digest)
			if distinct != w.Distinct || gen != w.Generated || len(states) != distinct || digest != w.Digest {
				t.Errorf("TLC finds %d distinct (%d dumped) / %d generated, digest %s; counts.json says %d / %d, %s",
					distinct, len(states), gen, digest, w.Distinct, w.Generated, w.Digest)
			}
		})
	}
}

// TestTLCPlantedBugs: TLC finds each bug planted in Surface.tla (its Bug
// constant) at the committed bounds, as the violation counts.json names;
// the explorer finds the same one (TestExplorerCatchesPlantedBugs).
func TestTLCPlantedBugs(t *testing.T) {
	jar := needTLC(t)
	for name, w := range readCounts(t) {
		if w.Violation == "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			out, err := tlc(t, jar, "..", name+".cfg", "Surface.tla", "-workers", "1")
			if err == nil || !regexp.MustCompile(`Error: (Invariant|Action property) `+w.Violation+` is violated`).MatchString(out) {
				t.Fatalf("TLC did not report %s (%v):\n%s", w.Violation, err, tail(out))
			}
		})
	}
}

// single reports whether s may go into a trace: TraceSurface.tla's
// assistant message registers at most one tool call.
func single(s ops.Step) bool {
	b, _ := json.Marshal(s.Data)
	return s.Type != event.TypeAssistantMessage || strings.Count(string(b), `tool-call`) <= 1
}

// viaAPI reports whether s may go into a random trace: the start and end
// events of a compaction are written by impl/compaction (which holds the
// lock, COMP-2), not appended raw; the spec's cstart and cend abstract
// away the vocabulary and compactionId that decide which end closes
// which start.
func viaAPI(s ops.Step) bool {
	switch s.Type {
	case event.TypeCompactStart, event.TypeCompactEnd, event.TypeCompactionStart, event.TypeCompactionEnd:
		return false
	}
	return true
}

// traces writes implementation traces: random sequences (with replaces,
// nested and not, and rejected appends, which leave no trace line); tool
// traffic with compactions (begun, committed, aborted, forgotten),
// prunes and repairs; realistic traffic with repair; and a seed.
func traces(t *testing.T, dir string) []string {
	var paths []string
	record := func(name string, run func(*session.Session)) {
		p := filepath.Join(dir, name+".ndjson")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		s := session.New(session.WithTrace(f))
		run(s)
		f.Close()
		paths = append(paths, p)
	}
	numbers := func(rng *rand.Rand) *ops.Program {
		nums := make([]uint32, 40)
		for j := range nums {
			nums[j] = rng.Uint32()
		}
		return &ops.Program{Numbers: nums}
	}
	for i := 0; i < 4; i++ {
		record(fmt.Sprintf("random-%d", i), func(s *session.Session) {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			d := &ops.Impl{S: s}
			for steps := 0; steps < 120; steps++ {
				st := d.State()
				var step ops.Step
				if rng.IntN(3) == 0 {
					step = ops.GenReplace(numbers(rng), st)
				} else {
					step = ops.GenAppend(numbers(rng), st)
				}
				if single(step) && viaAPI(step) {
					_, _ = s.Append(step.Type, step.Data, step.Intent)
				}
			}
			s.Repair()
		})
	}
	for i := 0; i < 4; i++ {
		record(fmt.Sprintf("compaction-%d", i), func(s *session.Session) {
			rng := rand.New(rand.NewPCG(uint64(i), 11))
			var d ops.Driver = &ops.Impl{S: s, Clock: func() int64 { return 1 }}
			for steps := 0; steps < 150; steps++ {
				step := ops.GenCompactionStep(numbers(rng), d.State())
				if single(step) {
					d, _ = ops.Apply(d, step)
				}
			}
			s.Repair()
		})
	}
	var log []json.RawMessage
	record("traffic", func(s *session.Session) {
		traffic.New(s).Append(150)
		s.Repair()
		for _, e := range s.Events() {
			b, _ := e.MarshalJSON()
			log = append(log, b)
		}
	})
	p := filepath.Join(dir, "seed.ndjson")
	f, _ := os.Create(p)
	if _, err := session.SeedJSON(log, session.WithTrace(f)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return append(paths, p)
}

// checkTrace runs TLC's trace validation on the NDJSON trace at path.
func checkTrace(t *testing.T, jar, path string) (string, error) {
	dir := t.TempDir()
	for _, f := range []string{"Surface.tla", "TraceSurface.tla", "TraceSurface.cfg"} {
		b, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	data, _ := os.ReadFile(path)
	mod, err := TraceModule(data)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "TraceData.tla"), []byte(mod), 0o644)
	return tlc(t, jar, dir, "TraceSurface.cfg", "TraceSurface.tla", "-workers", "1")
}

// TestTraceValidation: TLC reproduces every implementation trace
// (TraceMatched), repairs included, and rejects deliberately wrong ones:
// a surface the spec does not reach, and a repair that appended one
// closer fewer than it says.
func TestTraceValidation(t *testing.T) {
	jar := needTLC(t)
	dir := t.TempDir()
	paths := traces(t, dir)
	for _, p := range paths {
		out, err := checkTrace(t, jar, p)
		if err != nil || !strings.Contains(out, "No error has been found") {
			t.Fatalf("%s: trace not matched (%v):\n%s", filepath.Base(p), err, tail(out))
		}
		t.Logf("%s: matched", filepath.Base(p))
	}
	wrongSurface, wrongRepair := wrongTraces(t, dir, paths)
	for _, bad := range []string{wrongSurface, wrongRepair} {
		out, err := checkTrace(t, jar, bad)
		if err == nil || !strings.Contains(out, "TraceMatched") {
			t.Fatalf("%s: a wrong trace was accepted:\n%s", filepath.Base(bad), tail(out))
		}
	}
}

// wrongTraces writes two deliberately wrong traces: one line reports a
// surface the spec does not reach; a repair leaves out its last closer.
func wrongTraces(t *testing.T, dir string, paths []string) (wrongSurface, wrongRepair string) {
	rewrite := func(path string, pick func(map[string]any) bool, edit func(map[string]any)) string {
		data, _ := os.ReadFile(path)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		for i := len(lines) / 2; i < len(lines); i++ {
			var r map[string]any
			json.Unmarshal([]byte(lines[i]), &r)
			if pick(r) {
				edit(r)
				b, _ := json.Marshal(r)
				lines[i] = string(b)
				if r["dropPrevious"] == true {
					lines = append(lines[:i-1], lines[i:]...)
				}
				bad := filepath.Join(dir, "wrong-"+filepath.Base(path))
				os.WriteFile(bad, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
				return bad
			}
		}
		t.Fatalf("%s: no line to break", path)
		return ""
	}
	wrongSurface = rewrite(paths[0], func(r map[string]any) bool { return r["action"] == "append" }, func(r map[string]any) {
		r["surface"] = append(r["surface"].([]any), 424242)
	})
	// The repair forgot its last closer (the turn end): drop its line and
	// count one closer fewer.
	wrongRepair = rewrite(paths[len(paths)-2], func(r map[string]any) bool { return r["action"] == "repair" && r["closers"].(float64) > 0 }, func(r map[string]any) {
		r["closers"] = r["closers"].(float64) - 1
		r["dropPrevious"] = true
	})
	return wrongSurface, wrongRepair
}

func readTrace(t *testing.T, path string) []session.TraceLine {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []session.TraceLine
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r session.TraceLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		lines = append(lines, r)
	}
	return lines
}

// TestTraceReplay is TestTraceValidation without TLC: ReplayTrace, the Go
// mirror of TraceSurface.tla, matches every implementation trace and
// rejects the wrong ones.
func TestTraceReplay(t *testing.T) {
	dir := t.TempDir()
	paths := traces(t, dir)
	for _, p := range paths {
		lines := readTrace(t, p)
		if n, why := ReplayTrace(lines); n != 0 {
			t.Fatalf("%s: line %d not matched: %s\n%+v", filepath.Base(p), n, why, lines[n-1])
		}
	}
	wrongSurface, wrongRepair := wrongTraces(t, dir, paths)
	for _, bad := range []string{wrongSurface, wrongRepair} {
		if n, _ := ReplayTrace(readTrace(t, bad)); n == 0 {
			t.Errorf("%s: a wrong trace was matched", filepath.Base(bad))
		}
	}
}

// TestTracesAreWritten runs without TLC: the traces are produced, every
// line has the fields TraceSurface.tla reads, TraceModule turns each into
// a TraceData module, and the compaction traces do compact and repair.
func TestTracesAreWritten(t *testing.T) {
	seen := map[string]int{}
	for _, p := range traces(t, t.TempDir()) {
		data, _ := os.ReadFile(p)
		n := 0
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var r session.TraceLine
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			seen[r.T]++
			if r.Action == "repair" && r.Closers > 0 {
				seen["repair-with-closers"]++
			}
			n++
		}
		if n < 20 {
			t.Fatalf("%s: only %d lines", p, n)
		}
		if _, err := TraceModule(data); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	for _, k := range []string{"user", "summary", "asst", "result", "call", "tstart", "tend", "cstart", "cend", "repair-with-closers"} {
		if seen[k] == 0 {
			t.Errorf("no trace line of kind %q: the traces do not exercise it", k)
		}
	}
	t.Logf("trace lines by kind: %v", seen)
	if _, err := TraceModule([]byte(`{"action":"append"}`)); err == nil {
		t.Error("TraceModule accepted a line without its fields")
	}
}

func tail(s string) string {
	if len(s) > 3000 {
		return s[len(s)-3000:]
	}
	return s
}
