package explore

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
		if w.Violation != "" || w.Witness != "" {
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
// constant) at the committed bounds, as the violation counts.json names,
// and reaches each witness of the MCReach_* configs; the explorer finds
// the same (TestExplorerCatchesPlantedBugs, TestReachability).
func TestTLCPlantedBugs(t *testing.T) {
	jar := needTLC(t)
	for name, w := range readCounts(t) {
		want := w.Violation + w.Witness // one of them
		if want == "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			out, err := tlc(t, jar, "..", name+".cfg", "Surface.tla", "-workers", "1")
			if err == nil || !regexp.MustCompile(`Error: (Invariant|Action property) `+want+` is violated`).MatchString(out) {
				t.Fatalf("TLC did not report %s (%v):\n%s", want, err, tail(out))
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
	// Traces are written in strict mode (Surface.tla's results answer
	// pending calls), but for the crash with everything open, whose
	// shadowed call strict mode would refuse (STRICT-7).
	record := func(name string, run func(*session.Session)) {
		p := filepath.Join(dir, name+".ndjson")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		opts := []session.Option{session.WithTrace(f), session.WithStrict()}
		if name == "crash-all-open" {
			opts = opts[:1]
		}
		s := session.New(opts...)
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
					step = inTurn(s, step)
					_, _ = s.Append(context.Background(), event.Raw{Type: step.Type, Data: step.Data}, step.Intent.Value())
				}
			}
			s.Repair(context.Background())
		})
	}
	for i := 0; i < 4; i++ {
		record(fmt.Sprintf("compaction-%d", i), func(s *session.Session) {
			rng := rand.New(rand.NewPCG(uint64(i), 11))
			var d ops.Driver = &ops.Impl{S: s, Clock: func() int64 { return 1 }}
			for steps := 0; steps < 300; steps++ {
				step := ops.GenCompactionStep(numbers(rng), d.State())
				if step.Kind == ops.KindAppend {
					// A harness opens a turn before anything else happens,
					// answers the calls it has before it appends anything
					// else (STRICT-4: a result names a pending call, or is
					// not sent).
					_, open := s.OpenTurn()
					pend := s.PendingCalls()
					switch {
					case !open:
						step.Type, step.Data, step.Intent = event.TypeTurnStart, json.RawMessage(`{"turn":1,"trigger":{"kind":"message"}}`), nil
					case len(pend) > 0:
						step.Type, step.Data = event.TypeToolResult, json.RawMessage(`{"turn":1,"step":1,"callId":"`+pend[rng.IntN(len(pend))].ID+`","content":[{"type":"text","text":"done"}],"isError":false}`)
						step.Intent = &event.Intent{Op: event.Append()}
					case step.Type == event.TypeToolResult:
						continue
					}
				}
				if single(step) {
					d, _ = ops.Apply(d, step)
				}
			}
			s.Repair(context.Background())
		})
	}
	// A crash with everything open: a compaction (committed in odd rounds,
	// left open in even ones), a step, two calls (one with its tool/call
	// event, the other's message shadowed in odd rounds): the repair
	// writes every kind of closer (the compaction's end, results, the step
	// end, the turn end) and leaves out the shadowed call's (REP-4).
	record("crash-all-open", func(s *session.Session) {
		var d ops.Driver = &ops.Impl{S: s, Clock: func() int64 { return 1 }}
		do := func(st ops.Step) {
			var o ops.Outcome
			if d, o = ops.Apply(d, st); o.Code != "" {
				t.Fatalf("crash-all-open: %s %s: %s", st.Kind, st.Type, o.Code)
			}
		}
		msg := func(t event.Type, data string) ops.Step {
			return ops.Step{Kind: ops.KindAppend, Type: t, Data: json.RawMessage(data), Intent: &event.Intent{Op: event.Append()}}
		}
		bare := func(t event.Type, data string) ops.Step {
			return ops.Step{Kind: ops.KindAppend, Type: t, Data: json.RawMessage(data)}
		}
		call := func(id string) ops.Step {
			return msg(event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"`+id+`","name":"read","arguments":{}}]}`)
		}
		for round := 0; round < 4; round++ {
			steps := []ops.Step{
				bare(event.TypeTurnStart, `{"turn":1,"trigger":{"kind":"message"}}`),
				msg(event.TypeUserMessage, `{"content":[{"type":"text","text":"look"}],"source":{"kind":"user"}}`),
				msg(event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"text","text":"ok"}]}`),
			}
			for _, st := range steps {
				do(st)
			}
			sur := d.State().Surface
			do(ops.Step{Kind: ops.KindBegin, Start: sur[len(sur)-2], End: sur[len(sur)-1]})
			if round%2 == 1 {
				// This round's compaction commits (its summary and end);
				// the others are left open for the repair to end.
				do(ops.Step{Kind: ops.KindCommit, Plain: true, Blocks: []json.RawMessage{json.RawMessage(`{"type":"text","text":"s"}`)}})
			}
			for _, st := range []ops.Step{
				bare(event.TypeStepStart, `{"turn":1,"step":1}`),
				call(fmt.Sprintf("a%d", round)),
				bare(event.TypeToolCall, fmt.Sprintf(`{"turn":1,"step":1,"callId":"a%d","name":"read","arguments":"{}"}`, round)),
				call(fmt.Sprintf("b%d", round)),
			} {
				do(st)
			}
			if round%2 == 1 {
				// REP-4: the second call's message is shadowed by a
				// replace; its call gets no result closer.
				sur := d.State().Surface
				last := sur[len(sur)-1]
				do(ops.Step{Kind: ops.KindAppend, Type: event.TypeUserMessage,
					Data: json.RawMessage(`{"content":[{"type":"text","text":"folded"}],"source":{"kind":"user"}}`), Intent: &event.Intent{Op: event.Replace(last, last), Sources: []int64{last}}})
			}
			d.Forget() // the compaction's process is gone
			s.Repair(context.Background())
		}
	})
	// A provider's compaction (PROV-3) replacing the surface, tool traffic
	// after it, a library compaction of what follows it (PROV-4), and a
	// second provider compaction that folds the summary too.
	record("provider-compaction", func(s *session.Session) {
		var d ops.Driver = &ops.Impl{S: s, Clock: func() int64 { return 1 }}
		do := func(st ops.Step) {
			var o ops.Outcome
			if d, o = ops.Apply(d, st); o.Code != "" {
				t.Fatalf("provider-compaction: %s %s: %s", st.Kind, st.Type, o.Code)
			}
		}
		msg := func(ty event.Type, data string, intent *event.Intent) ops.Step {
			return ops.Step{Kind: ops.KindAppend, Type: ty, Data: json.RawMessage(data), Intent: intent}
		}
		ap := &event.Intent{Op: event.Append()}
		pcomp := `{"turn":1,"step":1,"content":[{"type":"provider-item","compaction":true,"text":"s","native":{"provider":"anthropic","model":"claude-sonnet-4-5","opaque":true,"item":{"type":"compaction","content":"s"}}}]}`
		whole := func() *event.Intent {
			sur := d.State().Surface
			return &event.Intent{Op: event.Replace(sur[0], sur[len(sur)-1]), Sources: append([]int64(nil), sur...)}
		}
		do(msg(event.TypeTurnStart, `{"turn":1,"trigger":{"kind":"message"}}`, nil))
		do(msg(event.TypeUserMessage, `{"content":[{"type":"text","text":"q"}],"source":{"kind":"user"}}`, ap))
		do(msg(event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"text","text":"a"}]}`, ap))
		do(msg(event.TypeAssistantMessage, pcomp, whole()))
		for round := 0; round < 3; round++ {
			do(msg(event.TypeUserMessage, `{"content":[{"type":"text","text":"more"}],"source":{"kind":"user"}}`, ap))
			do(msg(event.TypeAssistantMessage, fmt.Sprintf(`{"turn":1,"step":1,"content":[{"type":"tool-call","id":"p%d","name":"read","arguments":{}}]}`, round), ap))
			do(msg(event.TypeToolResult, fmt.Sprintf(`{"turn":1,"step":1,"callId":"p%d","content":[],"isError":false}`, round), ap))
		}
		sur := d.State().Surface
		do(ops.Step{Kind: ops.KindBegin, Start: sur[1], End: sur[len(sur)-1]})
		do(ops.Step{Kind: ops.KindCommit, Plain: true, Blocks: []json.RawMessage{json.RawMessage(`{"type":"text","text":"s"}`)}})
		do(msg(event.TypeUserMessage, `{"content":[{"type":"text","text":"again"}],"source":{"kind":"user"}}`, ap))
		do(msg(event.TypeAssistantMessage, pcomp, whole()))
		s.Repair(context.Background())
	})
	var log []json.RawMessage
	record("traffic", func(s *session.Session) {
		traffic.New(s).Append(150)
		s.Repair(context.Background())
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

// inTurn makes a random step one strict mode may take: a turn/start
// when no turn is open, and the open turn's number in the step's data.
func inTurn(s *session.Session, step ops.Step) ops.Step {
	turn, open := s.OpenTurn()
	if !open {
		step.Type, step.Intent = event.TypeTurnStart, nil
		step.Data = json.RawMessage(fmt.Sprintf(`{"turn":%d,"trigger":{"kind":"message"}}`, s.NextTurn()))
		return step
	}
	raw, _ := step.Data.(json.RawMessage)
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil && m["turn"] != nil {
		m["turn"] = json.RawMessage(strconv.FormatInt(turn, 10))
		b, _ := json.Marshal(m)
		step.Data = json.RawMessage(b)
	}
	return step
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
	for _, bad := range wrongTraces(t, dir, paths) {
		out, err := checkTrace(t, jar, bad)
		if err == nil || !strings.Contains(out, "TraceMatched") {
			t.Fatalf("%s: a wrong trace was accepted:\n%s", filepath.Base(bad), tail(out))
		}
	}
}

// wrongTraces writes deliberately wrong traces: one line reports a
// surface the spec does not reach; a repair leaves out its last closer; a
// second result answers a call already answered; a compaction's end comes
// when no compaction is open; a summary folds a provider's compaction
// (PROV-4, written by hand). Each of the second result and the stray end is a trace the
// implementation wrote, cut after an accepted line that is then repeated
// (with the surface the repeated event would give): only the rule it
// breaks rejects it.
func wrongTraces(t *testing.T, dir string, paths []string) []string {
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
	wrongSurface := rewrite(paths[0], func(r map[string]any) bool { return r["action"] == "append" }, func(r map[string]any) {
		r["surface"] = append(r["surface"].([]any), 424242)
	})
	// The repair forgot its last closer (the turn end): drop its line and
	// count one closer fewer.
	wrongRepair := rewrite(paths[len(paths)-2], func(r map[string]any) bool { return r["action"] == "repair" && r["closers"].(float64) > 0 }, func(r map[string]any) {
		r["closers"] = r["closers"].(float64) - 1
		r["dropPrevious"] = true
	})
	repeat := func(name, path string, pick func(session.TraceLine) bool) string {
		lines := readTrace(t, path)
		seq := int64(0)
		for i, r := range lines {
			if r.Action != "append" {
				continue
			}
			if pick(r) && i > 0 {
				again := r
				if r.Op == "append" {
					again.Surface = append(slices.Clone(r.Surface), seq+1)
				}
				var b strings.Builder
				for _, l := range append(lines[:i+1:i+1], again) {
					j, _ := json.Marshal(l)
					b.Write(append(j, '\n'))
				}
				bad := filepath.Join(dir, name+"-"+filepath.Base(path))
				os.WriteFile(bad, []byte(b.String()), 0o644)
				return bad
			}
			seq++
		}
		t.Fatalf("%s: no line to repeat", path)
		return ""
	}
	var harness string
	for _, p := range paths {
		if strings.HasPrefix(filepath.Base(p), "crash-all-open") {
			harness = p
		}
	}
	extraResult := repeat("extra-result", harness, func(r session.TraceLine) bool { return r.T == "result" && r.Op == "append" })
	strayEnd := repeat("stray-end", harness, func(r session.TraceLine) bool { return r.T == "cend" })
	// PROV-4: a summary that folds a provider's compaction.
	overProvider := filepath.Join(dir, "wrong-summary-over-provider.ndjson")
	var b strings.Builder
	for _, l := range []session.TraceLine{
		{Action: "append", T: "tstart", Op: "none", Src: []int64{}, Surface: []int64{}},
		{Action: "append", T: "pcomp", Op: "append", Src: []int64{}, Surface: []int64{1}},
		{Action: "append", T: "cstart", Op: "none", Src: []int64{}, Surface: []int64{1}},
		{Action: "append", T: "summary", Op: "replace", Start: 1, End: 1, Src: []int64{1}, Surface: []int64{3}},
		{Action: "append", T: "cend", Op: "none", Src: []int64{}, Surface: []int64{3}},
	} {
		j, _ := json.Marshal(l)
		b.Write(append(j, '\n'))
	}
	os.WriteFile(overProvider, []byte(b.String()), 0o644)
	return []string{wrongSurface, wrongRepair, extraResult, strayEnd, overProvider}
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
	for _, bad := range wrongTraces(t, dir, paths) {
		n, why := ReplayTrace(readTrace(t, bad))
		if n == 0 {
			t.Errorf("%s: a wrong trace was matched", filepath.Base(bad))
		}
		t.Logf("%s: line %d not matched: %s", filepath.Base(bad), n, why)
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
		var lines []session.TraceLine
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var r session.TraceLine
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			seen[r.T]++
			if r.Action == "repair" && r.Closers > 0 {
				seen["repair-with-closers"]++
				for _, c := range lines[len(lines)-r.Closers:] {
					seen["closer-"+c.T]++
				}
			}
			lines = append(lines, r)
			n++
		}
		if n < 20 {
			t.Fatalf("%s: only %d lines", p, n)
		}
		if _, err := TraceModule(data); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	for _, k := range []string{"user", "summary", "asst", "result", "call", "tstart", "tend", "sstart", "send", "cstart", "cend", "pcomp", "repair-with-closers",
		"closer-result", "closer-send", "closer-tend", "closer-cend"} {
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
