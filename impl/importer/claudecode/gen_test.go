package claudecode_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surfacelog/surface/impl/importer/claudecode"
)

// transcript writes a transcript as Claude Code does (spec/harnesses.md
// §2.2-§2.4): one entry per content block of a response, results after
// all blocks (each a child of its own tool_use, the conversation going on
// from the first: the off-chain pattern) or interleaved (streaming),
// progress and metadata entries, rewinds to an earlier answer, compactions,
// sidechains, synthetic errors, a crash at the end.
type transcript struct {
	r      *rand.Rand
	buf    bytes.Buffer
	n      int
	leaf   string   // the uuid the conversation goes on from
	ends   []string // uuids of final text answers, where a rewind may branch
	msgs   int
	tools  int
	shapes map[string]int
}

func (g *transcript) chance(p float64) bool { return g.r.Float64() < p }

func (g *transcript) write(v map[string]any) string {
	g.n++
	u := fmt.Sprintf("e%d", g.n)
	if _, meta := v["uuid"]; !meta && v["type"] != "last-prompt" && v["type"] != "file-history-snapshot" {
		v["uuid"] = u
		v["sessionId"] = "S"
		v["timestamp"] = fmt.Sprintf("2026-02-10T10:%02d:%02d.000Z", g.n/60%60, g.n%60)
		if _, ok := v["isSidechain"]; !ok {
			v["isSidechain"] = false
		}
	}
	b, _ := json.Marshal(v)
	g.buf.Write(b)
	g.buf.WriteByte('\n')
	return u
}

func (g *transcript) parent() any {
	if g.leaf == "" {
		return nil
	}
	return g.leaf
}

func (g *transcript) user(content any, extra map[string]any) string {
	v := map[string]any{"type": "user", "parentUuid": g.parent(), "message": map[string]any{"role": "user", "content": content}}
	for k, x := range extra {
		v[k] = x
	}
	g.leaf = g.write(v)
	return g.leaf
}

func (g *transcript) block(mid string, b map[string]any, parent any) string {
	return g.write(map[string]any{"type": "assistant", "parentUuid": parent, "message": map[string]any{"id": mid, "role": "assistant", "model": "claude-opus-4-5-20251101", "content": []any{b}}})
}

func (g *transcript) text(p string) string { return fmt.Sprintf("%s %d", p, g.r.IntN(1000)) }

func (g *transcript) turn(last bool) {
	if g.chance(0.15) && len(g.ends) > 0 { // rewind: branch from an earlier answer
		g.leaf = g.ends[g.r.IntN(len(g.ends))]
		g.shapes["rewind"]++
	}
	if g.chance(0.1) {
		g.user("<local-command-caveat>"+g.text("caveat")+"</local-command-caveat>", map[string]any{"isMeta": true})
	}
	g.user(g.text("prompt"), nil)
	if g.chance(0.2) {
		g.write(map[string]any{"type": "file-history-snapshot", "messageId": g.leaf, "snapshot": map[string]any{}})
	}
	steps := 1 + g.r.IntN(3)
	for s := 0; s < steps; s++ {
		g.msgs++
		mid := fmt.Sprintf("msg_%d", g.msgs)
		if g.chance(0.05) {
			g.leaf = g.write(map[string]any{"type": "assistant", "parentUuid": g.parent(), "isApiErrorMessage": true, "message": map[string]any{"id": mid + "e", "role": "assistant", "model": "<synthetic>", "content": []any{map[string]any{"type": "text", "text": "API Error"}}}})
		}
		if g.chance(0.5) {
			g.leaf = g.block(mid, map[string]any{"type": "thinking", "thinking": "", "signature": g.text("sig")}, g.parent())
		}
		if g.chance(0.4) {
			g.leaf = g.block(mid, map[string]any{"type": "text", "text": g.text("saying")}, g.parent())
		}
		final := s == steps-1
		ncalls := 0
		if !final || (last && g.chance(0.4)) {
			ncalls = 1 + g.r.IntN(3)
		}
		if ncalls == 0 {
			g.leaf = g.block(mid, map[string]any{"type": "text", "text": g.text("answer")}, g.parent())
			g.ends = append(g.ends, g.leaf)
			if g.chance(0.3) {
				g.write(map[string]any{"type": "system", "subtype": "turn_duration", "parentUuid": g.leaf, "durationMs": 100})
			}
			continue
		}
		crash := last && final
		var ids, uses []string
		streaming := g.chance(0.4)
		for c := 0; c < ncalls; c++ {
			g.tools++
			id := fmt.Sprintf("toolu_%d", g.tools)
			u := g.block(mid, map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": map[string]any{"command": g.text("ls")}}, g.parent())
			g.leaf = u
			if g.chance(0.2) {
				g.write(map[string]any{"type": "progress", "parentUuid": u, "toolUseID": id, "data": map[string]any{"type": "bash_progress"}})
			}
			if streaming && !crash {
				g.user([]any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": g.text("out"), "is_error": g.chance(0.1)}}, map[string]any{"sourceToolAssistantUUID": u})
				g.shapes["streaming"]++
			}
			ids, uses = append(ids, id), append(uses, u)
		}
		if crash {
			if g.chance(0.5) {
				g.buf.WriteString(`{"parentUuid":"x","type":"user","message":{"role":"user","content":[{"type":"tool_res`)
			}
			g.shapes["crash"]++
			return
		}
		if !streaming {
			// Results in reverse order, each a child of its own tool_use; the
			// conversation goes on from the first one's result.
			var first string
			for c := len(ids) - 1; c >= 0; c-- {
				g.leaf = uses[c]
				content := any(g.text("out"))
				if g.chance(0.2) {
					content = []any{map[string]any{"type": "text", "text": g.text("out")}, map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "AAAA"}}}
				}
				r := g.user([]any{map[string]any{"type": "tool_result", "tool_use_id": ids[c], "content": content}}, map[string]any{"sourceToolAssistantUUID": uses[c]})
				if c == 0 {
					first = r
				}
			}
			g.leaf = first
			if len(ids) > 1 {
				g.shapes["off-chain"]++
			}
		}
	}
	if g.chance(0.1) {
		sub := g.write(map[string]any{"type": "user", "parentUuid": nil, "isSidechain": true, "agentId": "a1", "message": map[string]any{"role": "user", "content": "sub task"}})
		g.write(map[string]any{"type": "assistant", "parentUuid": sub, "isSidechain": true, "agentId": "a1", "message": map[string]any{"id": "msg_sub" + sub, "role": "assistant", "model": "claude-haiku-4-5", "content": []any{map[string]any{"type": "text", "text": "sub done"}}}})
		g.shapes["sidechain"]++
	}
	if !last && g.chance(0.12) {
		b := g.write(map[string]any{"type": "system", "subtype": "compact_boundary", "parentUuid": nil, "logicalParentUuid": g.leaf, "content": "Conversation compacted", "compactMetadata": map[string]any{"trigger": "auto"}})
		g.leaf = b
		g.user("This session is being continued from a previous conversation. "+g.text("summary"), map[string]any{"isCompactSummary": true, "isVisibleInTranscriptOnly": true})
		g.ends = nil
		g.shapes["compaction"]++
	}
	g.write(map[string]any{"type": "last-prompt", "lastPrompt": "p", "leafUuid": g.leaf})
}

func generate(seed uint64, shapes map[string]int) []byte {
	g := &transcript{r: rand.New(rand.NewPCG(seed, 11)), shapes: shapes}
	turns := 1 + g.r.IntN(10)
	for i := 0; i < turns; i++ {
		g.turn(i == turns-1)
	}
	return g.buf.Bytes()
}

// TestGeneratedTranscripts is the differential test of IMP-6 over
// transcripts from this package's own writer: Check finds nothing, the
// import passes strict mode, keeps every line, and its messages are the
// conversation the independent reconstruction rebuilds.
func TestGeneratedTranscripts(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 80
	}
	shapes := map[string]int{}
	for seed := uint64(0); seed < uint64(n); seed++ {
		raw := generate(seed, shapes)
		f, err := claudecode.Parse(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if fs := claudecode.Check(f); len(fs) > 0 {
			t.Fatalf("seed %d: findings %v\n%s", seed, fs, raw)
		}
		l, err := claudecode.Import(f)
		if err != nil {
			t.Fatalf("seed %d: import: %v", seed, err)
		}
		if bad := l.CheckStrict(); bad != nil {
			t.Fatalf("seed %d: strict: %v\n%s", seed, bad, raw)
		}
		seen := map[int]bool{}
		for _, n := range l.Lines {
			seen[n] = true
		}
		for _, e := range f.Entries {
			// A response's blocks and the results read before its last block
			// are in the events of the line that completes them.
			completedLater := e.Type == "assistant" || (e.Type == "user" && bytes.Contains(e.Content, []byte(`"tool_result"`)))
			if !seen[e.N] && !completedLater {
				t.Fatalf("seed %d: line %d left no event", seed, e.N)
			}
		}
		if d := cmp.Diff(render(rebuild(f)), render(project(t, l))); d != "" {
			t.Fatalf("seed %d: imported messages differ from the reconstruction (-rebuild +import):\n%s\n%s", seed, d, raw)
		}
	}
	for _, k := range []string{"rewind", "streaming", "off-chain", "crash", "sidechain", "compaction"} {
		if shapes[k] == 0 {
			t.Errorf("no generated transcript had %q", k)
		}
	}
}
