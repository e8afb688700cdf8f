package explore

import (
	"bufio"
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

	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/ops"
	"github.com/surfacelog/surface/internal/traffic"
)

// tlc runs TLC on spec with config in ../ and returns its output.
func tlc(t *testing.T, jar, config, spec string, env ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("java", "-Xss64m", "-XX:+UseParallelGC", "-cp", jar, "tlc2.TLC", "-noGenerateSpecTE", "-workers", "2", "-metadir", t.TempDir(), "-config", config, spec)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func needTLC(t *testing.T) string {
	jar := os.Getenv("TLA2TOOLS_JAR")
	if jar == "" {
		t.Skip("TLA2TOOLS_JAR is not set: TLC is not available (CI checks the same state spaces with TestExplorerMatchesTLC)")
	}
	return jar
}

// TestTLCModelConfigs runs TLC on every MC config: no invariant or
// property is violated, and the distinct and generated state counts are
// the ones committed in counts.json (which the Go explorer also finds).
func TestTLCModelConfigs(t *testing.T) {
	jar := needTLC(t)
	want := readCounts(t)
	re := regexp.MustCompile(`(\d+) states generated, (\d+) distinct states found, 0 states left on queue`)
	for name, w := range want {
		out, err := tlc(t, jar, name+".cfg", "Surface.tla")
		m := re.FindStringSubmatch(out)
		if err != nil || m == nil || !strings.Contains(out, "No error has been found") {
			t.Fatalf("%s: TLC failed (%v):\n%s", name, err, tail(out))
		}
		gen, _ := strconv.Atoi(m[1])
		distinct, _ := strconv.Atoi(m[2])
		t.Logf("%s: TLC %d distinct, %d generated", name, distinct, gen)
		if distinct != w.Distinct || gen != w.Generated {
			t.Errorf("%s: TLC finds %d distinct / %d generated, counts.json says %d / %d", name, distinct, gen, w.Distinct, w.Generated)
		}
	}
}

// traces writes implementation traces: random sequences (with replaces,
// nested and not, and rejected appends, which leave no trace line),
// realistic traffic with repair, and a seed.
func traces(t *testing.T, dir string) []string {
	var paths []string
	record := func(name string, run func(*session.Session)) {
		p := filepath.Join(dir, name+".ndjson")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		s := session.New(session.WithTrace(w))
		run(s)
		w.Flush()
		f.Close()
		paths = append(paths, p)
	}
	for i := 0; i < 4; i++ {
		record(fmt.Sprintf("random-%d", i), func(s *session.Session) {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			d := &ops.Impl{S: s}
			for steps := 0; steps < 120; steps++ {
				nums := make([]uint32, 40)
				for j := range nums {
					nums[j] = rng.Uint32()
				}
				st := d.State()
				var step ops.Step
				if rng.IntN(3) == 0 {
					step = ops.GenReplace(&ops.Program{Numbers: nums}, st)
				} else {
					step = ops.GenAppend(&ops.Program{Numbers: nums}, st)
				}
				_, _ = s.Append(step.Type, step.Data, step.Intent)
			}
			s.Repair()
		})
	}
	var log []byte
	record("traffic", func(s *session.Session) {
		traffic.New(s).Append(150)
		s.Repair()
		for _, e := range s.Events() {
			b, _ := e.MarshalJSON()
			log = append(append(log, b...), '\n')
		}
	})
	p := filepath.Join(dir, "seed.ndjson")
	f, _ := os.Create(p)
	var lines []json.RawMessage
	for _, l := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		lines = append(lines, json.RawMessage(l))
	}
	if _, err := session.SeedJSON(lines, session.WithTrace(f)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return append(paths, p)
}

// TestTraceValidation: TLC reproduces every implementation trace
// (TraceMatched), and rejects a deliberately wrong one.
func TestTraceValidation(t *testing.T) {
	jar := needTLC(t)
	dir := t.TempDir()
	paths := traces(t, dir)
	for _, p := range paths {
		out, err := tlc(t, jar, "TraceSurface.cfg", "TraceSurface.tla", "SURFACE_TRACE="+p)
		if err != nil || !strings.Contains(out, "No error has been found") {
			t.Fatalf("%s: trace not matched (%v):\n%s", filepath.Base(p), err, tail(out))
		}
		t.Logf("%s: matched", filepath.Base(p))
	}
	// A wrong trace: one line reports a surface the spec does not reach.
	data, _ := os.ReadFile(paths[0])
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var r map[string]any
	json.Unmarshal([]byte(lines[len(lines)/2]), &r)
	r["surface"] = append(r["surface"].([]any), 424242)
	b, _ := json.Marshal(r)
	lines[len(lines)/2] = string(b)
	bad := filepath.Join(dir, "wrong.ndjson")
	os.WriteFile(bad, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	out, err := tlc(t, jar, "TraceSurface.cfg", "TraceSurface.tla", "SURFACE_TRACE="+bad)
	if err == nil || !strings.Contains(out, "TraceMatched") {
		t.Fatalf("a wrong trace was accepted:\n%s", tail(out))
	}
}

// TestTracesAreWritten runs without TLC: the traces are produced and
// every line has the fields TraceSurface.tla reads.
func TestTracesAreWritten(t *testing.T) {
	for _, p := range traces(t, t.TempDir()) {
		data, _ := os.ReadFile(p)
		n := 0
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var r map[string]any
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			for _, k := range []string{"action", "t", "op", "start", "end", "src", "call", "surface"} {
				if _, ok := r[k]; !ok {
					t.Fatalf("%s: line without %q: %s", p, k, l)
				}
			}
			n++
		}
		if n < 20 {
			t.Fatalf("%s: only %d lines", p, n)
		}
	}
}

func tail(s string) string {
	if len(s) > 3000 {
		return s[len(s)-3000:]
	}
	return s
}
