package claudecode

import (
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/importer"
)

// Check reports every rule of the transcript format and of the Messages
// API's tool pairing that a line breaks (spec/harnesses.md §2.7; IMP-2,
// IMP-4, IMP-5), in line order: a line that is not an entry (a torn last
// line excepted); no conversation; two entries with one uuid and
// different content; a parentUuid naming no entry (the file's first entry
// excepted); a cycle of parents; another sessionId; a sidechain entry on
// the conversation's chain; and on the conversation rebuilt from the
// newest entry, with the blocks of one response regrouped by message id:
// a tool_use id used twice, a tool_use without a tool_result (the last
// response's excepted: a crash leaves them open), a second tool_result for
// one tool_use, a tool_result that answers no tool_use of the response
// right before it. It never changes the file.
func Check(f *File) []importer.Finding {
	var out []importer.Finding
	add := func(line int, code event.Code, format string, args ...any) {
		out = append(out, importer.Findingf(line, code, format, args...))
	}
	if len(f.Entries) == 0 {
		return []importer.Finding{importer.Findingf(0, event.CodeImportNoSession, "the file holds no line")}
	}
	h, err := Header(f)
	if err != nil {
		out = append(out, err.(importer.Finding))
	}
	t := NewTree(f)
	first := -1
	for i := range f.Entries {
		e := &f.Entries[i]
		if e.Problem != "" {
			add(e.N, event.CodeImportLineInvalid, "%s", e.Problem)
			continue
		}
		if e.UUID == "" {
			continue
		}
		if first < 0 {
			first = i
		}
		if j := t.byUUID[e.UUID]; j != i && string(f.Entries[j].Raw) != string(e.Raw) {
			add(e.N, event.CodeImportUUIDConflict, "uuid %q was given to the entry of line %d, with other content", e.UUID, f.Entries[j].N)
		}
		if _, ok := t.byUUID[e.Parent]; e.Parent != "" && !ok && i != first {
			add(e.N, event.CodeImportParentMissing, "parentUuid %q names no entry of the file", e.Parent)
		}
		if e.Conversation() && !e.Sidechain && h.ID != "" && e.SessionID != h.ID {
			add(e.N, event.CodeImportSessionMismatch, "sessionId %q, where the file's first entry has %q", e.SessionID, h.ID)
		}
	}
	// Cycles: each entry is walked once.
	state := make([]uint8, len(f.Entries)) // 0 new, 1 on the walk, 2 done
	for i := range f.Entries {
		var path []int
		j := i
		for j >= 0 && state[j] == 0 && f.Entries[j].Problem == "" {
			state[j] = 1
			path = append(path, j)
			p, ok := t.byUUID[f.Entries[j].Parent]
			if f.Entries[j].Parent == "" || !ok {
				j = -1
			} else {
				j = p
			}
		}
		if j >= 0 && state[j] == 1 {
			add(f.Entries[j].N, event.CodeImportParentCycle, "the parentUuid links from this entry come back to it")
		}
		for _, k := range path {
			state[k] = 2
		}
	}
	leaf := Leaf(f)
	if leaf < 0 {
		importer.Sort(out)
		return out
	}
	chain, ok := t.Chain(leaf)
	if !ok {
		importer.Sort(out)
		return out
	}
	for _, i := range chain {
		if f.Entries[i].Sidechain {
			add(f.Entries[i].N, event.CodeImportSidechainMixed, "a sidechain entry on the conversation's chain")
		}
	}
	out = append(out, pairing(f, reverse(chain))...)
	importer.Sort(out)
	return out
}

func reverse(s []int) []int {
	out := make([]int, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// pairing checks the tool pairing of the conversation on chain (root
// first), regrouped by message id.
func pairing(f *File, chain []int) []importer.Finding {
	var out []importer.Finding
	g := groups(f)
	results := map[string][]int{} // tool_use id -> entries answering it (main conversation)
	for i := range f.Entries {
		e := &f.Entries[i]
		if e.Problem != "" || e.Type != "user" || e.Sidechain {
			continue
		}
		for _, b := range blocks(e.Content) {
			if event.StringMember(b, "type") == "tool_result" {
				id := event.StringMember(b, "tool_use_id")
				results[id] = append(results[id], i)
			}
		}
	}
	seenUse := map[string]int{}
	var cur []string // tool_use ids of the last response on the chain
	done := map[string]bool{}
	var order []string // the responses on the chain, in order
	for _, i := range chain {
		e := &f.Entries[i]
		switch {
		case e.Type == "assistant" && !e.Synthetic():
			if done[e.MessageID] {
				continue
			}
			done[e.MessageID] = true
			order = append(order, e.MessageID)
			cur = nil
			for _, k := range g.entries[e.MessageID] {
				for _, b := range blocks(f.Entries[k].Content) {
					if event.StringMember(b, "type") != "tool_use" {
						continue
					}
					id := event.StringMember(b, "id")
					if l, dup := seenUse[id]; dup {
						out = append(out, importer.Findingf(f.Entries[k].N, event.CodeImportCallDuplicate, "tool_use id %q is used again (first at line %d)", id, l))
						continue
					}
					seenUse[id] = f.Entries[k].N
					cur = append(cur, id)
				}
			}
		case e.Type == "user":
			for _, b := range blocks(e.Content) {
				if event.StringMember(b, "type") != "tool_result" {
					continue
				}
				id := event.StringMember(b, "tool_use_id")
				if !contains(cur, id) {
					out = append(out, importer.Findingf(e.N, event.CodeImportOutputOrphan, "tool_result for %q, which is no tool_use of the response right before it", id))
				}
			}
		}
	}
	for n, mid := range order {
		for _, k := range g.entries[mid] {
			for _, b := range blocks(f.Entries[k].Content) {
				if event.StringMember(b, "type") != "tool_use" {
					continue
				}
				id := event.StringMember(b, "id")
				if seenUse[id] != f.Entries[k].N {
					continue // a reused id, reported as such
				}
				rs := results[id]
				switch {
				case len(rs) == 0 && n < len(order)-1:
					out = append(out, importer.Findingf(f.Entries[k].N, event.CodeImportCallUnanswered, "tool_use %q has no tool_result before the next response", id))
				case len(rs) > 1:
					out = append(out, importer.Findingf(f.Entries[rs[1]].N, event.CodeImportOutputDuplicate, "a second tool_result for %q (the first at line %d)", id, f.Entries[rs[0]].N))
				}
			}
		}
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// grouping is the assistant entries of the main conversation by message id.
type grouping struct {
	entries map[string][]int // message id -> its entries, in file order
	ofUse   map[string]string
}

func groups(f *File) grouping {
	g := grouping{entries: map[string][]int{}, ofUse: map[string]string{}}
	for i := range f.Entries {
		e := &f.Entries[i]
		if e.Problem != "" || e.Type != "assistant" || e.Sidechain || e.Synthetic() {
			continue
		}
		g.entries[e.MessageID] = append(g.entries[e.MessageID], i)
		for _, b := range blocks(e.Content) {
			if event.StringMember(b, "type") == "tool_use" {
				g.ofUse[event.StringMember(b, "id")] = e.MessageID
			}
		}
	}
	return g
}
