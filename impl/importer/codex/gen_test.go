package codex_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/importer/codex"
)

// rollout writes a rollout as Codex does (spec/harnesses.md §1.2-§1.4),
// with every rare shape drawn now and then, and knows which findings
// Check must report.
type rollout struct {
	r       *rand.Rand
	buf     bytes.Buffer
	n       int // lines written
	t       time.Time
	calls   int
	open    map[string]int // unanswered call id -> its line
	want    []string       // expected findings, "LINE CODE"
	turns   []bool         // live user turns: whether a compaction ran in each
	texts   []string       // user prompts so far (for replacement histories)
	legacyN int
}

func (g *rollout) line(kind string, payload any) {
	g.t = g.t.Add(time.Duration(1+g.r.IntN(5000)) * time.Millisecond)
	b, err := json.Marshal(map[string]any{"timestamp": g.t.UTC().Format("2006-01-02T15:04:05.000Z"), "type": kind, "payload": payload})
	if err != nil {
		panic(err)
	}
	g.buf.Write(b)
	g.buf.WriteByte('\n')
	g.n++
}

func (g *rollout) item(it map[string]any) { g.line("response_item", it) }

func msg(role string, texts ...string) map[string]any {
	kind := "input_text"
	if role == "assistant" {
		kind = "output_text"
	}
	var parts []map[string]any
	for _, t := range texts {
		parts = append(parts, map[string]any{"type": kind, "text": t})
	}
	return map[string]any{"type": "message", "role": role, "content": parts}
}

func (g *rollout) chance(p float64) bool { return g.r.Float64() < p }

// boundary reports the open calls a user turn or a compaction leaves
// without output.
func (g *rollout) boundary() {
	for id, line := range g.open {
		_ = id
		g.want = append(g.want, fmt.Sprintf("%d import.call_unanswered", line))
	}
	clear(g.open)
}

func (g *rollout) text(prefix string) string {
	s := fmt.Sprintf("%s %d", prefix, g.r.IntN(1000))
	if g.chance(0.1) {
		s += "\nsecond line with \"quotes\" and <tags>"
	}
	return s
}

func (g *rollout) turn(last bool) {
	if g.chance(0.2) {
		g.item(msg("user", "<environment_context>\n  <cwd>/p/"+g.text("d")+"</cwd>\n</environment_context>"))
	}
	if g.chance(0.1) {
		g.item(msg("developer", "<collaboration_mode>"+g.text("m")+"</collaboration_mode>"))
	}
	g.line("event_msg", map[string]any{"type": "task_started", "turn_id": fmt.Sprint(g.n)})
	g.boundary()
	prompt := g.text("prompt")
	m := msg("user", prompt)
	if g.chance(0.1) {
		m["content"] = append(m["content"].([]map[string]any), map[string]any{"type": "input_image", "image_url": "data:image/png;base64,AAAA"})
	}
	g.item(m)
	g.texts = append(g.texts, prompt)
	g.turns = append(g.turns, false)
	g.line("event_msg", map[string]any{"type": "user_message", "message": prompt})
	g.line("turn_context", map[string]any{"cwd": "/p", "model": []string{"gpt-5.2-codex", "gpt-5.1"}[g.r.IntN(2)], "summary": "auto"})
	steps := 1 + g.r.IntN(4)
	for s := 0; s < steps; s++ {
		if g.chance(0.5) {
			g.line("event_msg", map[string]any{"type": "token_count", "info": nil})
		}
		if g.chance(0.5) {
			r := map[string]any{"type": "reasoning", "summary": []map[string]any{{"type": "summary_text", "text": g.text("think")}}}
			if g.chance(0.7) {
				r["encrypted_content"] = "gAAAA" + fmt.Sprint(g.r.IntN(1e6))
			}
			g.item(r)
		}
		if g.chance(0.3) {
			a := msg("assistant", g.text("commentary"))
			if g.chance(0.5) {
				a["phase"] = "commentary"
			}
			g.item(a)
		}
		finalStep := s == steps-1
		ncalls := 0
		if !finalStep || (last && g.chance(0.3)) {
			ncalls = 1 + g.r.IntN(3)
		}
		var ids []string
		var kinds []string
		for c := 0; c < ncalls; c++ {
			g.calls++
			id := fmt.Sprintf("call_%d", g.calls)
			switch k := g.r.IntN(6); {
			case k == 0:
				g.item(map[string]any{"type": "custom_tool_call", "status": "completed", "call_id": id, "name": "apply_patch", "input": g.text("*** Begin Patch")})
				kinds = append(kinds, "custom_tool_call_output")
			case k == 1:
				g.item(map[string]any{"type": "local_shell_call", "call_id": id, "status": "completed", "action": map[string]any{"type": "exec", "command": []string{"ls", g.text("dir")}}})
				kinds = append(kinds, "function_call_output")
			default:
				args, _ := json.Marshal(map[string]any{"cmd": g.text("go test")})
				g.item(map[string]any{"type": "function_call", "name": "exec_command", "arguments": string(args), "call_id": id})
				kinds = append(kinds, "function_call_output")
			}
			g.open[id] = g.n
			ids = append(ids, id)
		}
		if g.chance(0.05) {
			g.item(map[string]any{"type": "web_search_call", "status": "completed", "action": map[string]any{"type": "search", "query": g.text("q")}})
		}
		interrupted := ncalls > 0 && !last && g.chance(0.08)
		crashed := ncalls > 0 && last && finalStep
		if interrupted || crashed {
			answered := g.r.IntN(ncalls)
			for c := 0; c < answered; c++ {
				g.item(map[string]any{"type": kinds[c], "call_id": ids[c], "output": "partial"})
				delete(g.open, ids[c])
			}
			if interrupted {
				g.item(msg("user", "<turn_aborted>\nThe user interrupted.\n</turn_aborted>"))
				g.line("event_msg", map[string]any{"type": "turn_aborted", "reason": "interrupted"})
				return
			}
			if g.chance(0.5) {
				g.buf.WriteString(`{"timestamp":"2026-01-01T00:00:00.000Z","type":"response_item","payload":{"type":"function_call_out`)
			}
			return
		}
		order := slices.Clone(ids)
		if g.chance(0.2) {
			g.r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		for _, id := range order {
			k := kinds[slices.Index(ids, id)]
			var out any = g.text("output")
			if g.chance(0.2) {
				out = []map[string]any{{"type": "input_text", "text": g.text("out")}, {"type": "input_image", "image_url": "data:image/png;base64,BBBB"}}
			}
			g.item(map[string]any{"type": k, "call_id": id, "output": out})
			delete(g.open, id)
		}
		if g.chance(0.05) {
			g.item(map[string]any{"type": "ghost_snapshot", "ghost_commit": map[string]any{"id": g.text("g")}})
		}
		if finalStep {
			g.item(msg("assistant", g.text("final")))
		}
	}
	if g.chance(0.05) {
		g.item(msg("system", "never sent"))
	}
	if g.chance(0.05) {
		g.line("world_state", map[string]any{"x": 1})
	}
	g.line("event_msg", map[string]any{"type": "task_complete", "turn_id": fmt.Sprint(g.n)})
}

func (g *rollout) between() {
	switch k := g.r.IntN(20); {
	case k == 0 && len(g.texts) > 0: // remote compaction
		var rh []map[string]any
		for _, t := range g.texts[max(0, len(g.texts)-2):] {
			rh = append(rh, msg("user", t))
		}
		if g.chance(0.5) {
			rh = append(rh, msg("developer", "<permissions instructions>ro</permissions instructions>"))
		}
		if g.chance(0.5) {
			rh = append(rh, msg("user", "Summary: "+g.text("s")))
		}
		rh = append(rh, map[string]any{"type": "compaction", "encrypted_content": g.text("ENC")})
		g.boundary()
		g.line("compacted", map[string]any{"message": "", "replacement_history": rh})
		g.line("event_msg", map[string]any{"type": "context_compacted"})
		if len(g.turns) > 0 {
			g.turns[len(g.turns)-1] = true
		}
	case k == 1 && g.legacyN < 2: // legacy compaction
		g.legacyN++
		g.line("compacted", map[string]any{"message": []string{"", "Summary: " + g.text("s")}[g.r.IntN(2)]})
		if len(g.turns) > 0 {
			g.turns[len(g.turns)-1] = true
		}
	case k == 2 && len(g.turns) > 0: // rollback, never of a turn that compacted
		n := 1 + g.r.IntN(3)
		for i := 0; i < n; i++ {
			if i >= len(g.turns) {
				break
			}
			if g.turns[len(g.turns)-1-i] {
				return
			}
		}
		g.line("event_msg", map[string]any{"type": "thread_rolled_back", "num_turns": n})
		g.turns = g.turns[:max(0, len(g.turns)-n)]
	}
}

func generate(seed uint64) (file []byte, findings []string) {
	g := &rollout{r: rand.New(rand.NewPCG(seed, 7)), t: time.Date(2026, 2, 23, 12, 0, 0, 0, time.UTC), open: map[string]int{}}
	meta := map[string]any{"id": fmt.Sprintf("019c8a70-0000-7000-8000-%012d", seed), "timestamp": "2026-02-23T12:00:00.000Z", "cwd": "/p", "originator": "codex_cli_rs", "cli_version": "0.104.0", "source": "cli", "model_provider": "openai", "base_instructions": map[string]any{"text": "You are Codex."}}
	if g.chance(0.2) {
		meta["forked_from_id"] = "019c0000-0000-7000-8000-000000000000"
	}
	g.line("session_meta", meta)
	if g.chance(0.7) {
		g.item(msg("developer", "<permissions instructions>sandbox</permissions instructions>"))
		g.item(msg("user", "# AGENTS.md instructions for /p\n\n"+g.text("rules")))
	}
	turns := 1 + g.r.IntN(12)
	for i := 0; i < turns; i++ {
		g.turn(i == turns-1)
		if i < turns-1 {
			g.between()
		}
	}
	slices.Sort(g.want)
	return g.buf.Bytes(), g.want
}

// TestGeneratedRollouts is the differential test of IMP-6 over rollouts
// from this package's own writer: for each, Check reports exactly the
// calls a later turn or compaction finds without output, the import
// passes strict mode, and its messages are the history the independent
// reconstruction rebuilds, item for item.
func TestGeneratedRollouts(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 100
	}
	shapes := map[string]int{}
	for seed := uint64(0); seed < uint64(n); seed++ {
		raw, wantFindings := generate(seed)
		f, err := codex.Parse(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		got := findingLines(codex.Check(f))
		slices.Sort(got)
		if d := cmp.Diff(wantFindings, got); d != "" {
			t.Fatalf("seed %d: findings (-want +got):\n%s", seed, d)
		}
		l, err := codex.Import(f)
		if err != nil {
			t.Fatalf("seed %d: import: %v", seed, err)
		}
		if bad := l.CheckStrict(); bad != nil {
			t.Fatalf("seed %d: the imported log breaks strict mode: %v\n%s", seed, bad, raw)
		}
		want, got2 := renderAll(rebuild(f)), renderAll(project(l, messagesOf(t, l)))
		if d := cmp.Diff(want, got2); d != "" {
			t.Fatalf("seed %d: imported messages differ from the reconstruction (-rebuild +import):\n%s", seed, d)
		}
		// IMP-3: every line of the file is in the log, as a message or a record.
		seen := map[int]bool{}
		for _, n := range l.Lines {
			seen[n] = true
		}
		for _, line := range f.Lines {
			if !seen[line.N] {
				t.Fatalf("seed %d: line %d left no event", seed, line.N)
			}
		}
		for _, e := range l.Events {
			if e.Op.Kind == event.OpReplace {
				shapes["replace"]++
			}
		}
		for k := range l.Kept {
			shapes["kept "+k]++
		}
		if f.Torn > 0 {
			shapes["torn"]++
		}
		if len(wantFindings) > 0 {
			shapes["findings"]++
		}
	}
	for _, k := range []string{"replace", "torn", "findings", "kept compacted", "kept event_msg thread_rolled_back", "kept response_item ghost_snapshot", "kept world_state"} {
		if shapes[k] == 0 {
			t.Errorf("no generated rollout had %q", k)
		}
	}
}
