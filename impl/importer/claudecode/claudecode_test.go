package claudecode_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/importer"
	"github.com/surfacelog/surface/impl/importer/claudecode"
	"github.com/surfacelog/surface/impl/session"
)

type apiMsg struct {
	role   string
	blocks [][]byte // Anthropic blocks
}

// rebuild is a second, independent reading of spec/harnesses.md §2.5: the
// conversation Claude Code resends on resume. Walk parentUuid from the
// newest main entry to the root or the latest compact boundary; keep user
// and assistant entries (synthetic errors out); put each response's
// blocks, from every main entry with its message id, in one assistant
// message at its first entry on the chain, followed by a user message of
// every tool_result in the file answering it; the other user blocks follow
// in chain order; consecutive user messages merge.
func rebuild(f *claudecode.File) []apiMsg {
	byUUID := map[string]*claudecode.Entry{}
	var leaf *claudecode.Entry
	for i := range f.Entries {
		e := &f.Entries[i]
		if e.Problem != "" || e.UUID == "" {
			continue
		}
		if byUUID[e.UUID] == nil {
			byUUID[e.UUID] = e
		}
		if e.Conversation() && !e.Sidechain {
			leaf = e
		}
	}
	var chain []*claudecode.Entry
	for e := leaf; e != nil; e = byUUID[e.Parent] {
		if e.Boundary() {
			break
		}
		chain = append([]*claudecode.Entry{e}, chain...)
		if e.Parent == "" {
			break
		}
	}
	var out []apiMsg
	push := func(role string, blocks [][]byte) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].role == role && role == "user" {
			out[n-1].blocks = append(out[n-1].blocks, blocks...)
			return
		}
		out = append(out, apiMsg{role, blocks})
	}
	done := map[string]bool{}
	placed := map[string]bool{}
	for _, e := range chain {
		switch {
		case e.Type == "assistant" && e.Model != "<synthetic>":
			if done[e.MessageID] {
				continue
			}
			done[e.MessageID] = true
			var blocks [][]byte
			uses := map[string]bool{}
			for i := range f.Entries {
				x := &f.Entries[i]
				if x.Problem == "" && x.Type == "assistant" && !x.Sidechain && x.MessageID == e.MessageID && x.Model != "<synthetic>" {
					for _, b := range elems(x.Content) {
						blocks = append(blocks, b)
						if event.StringMember(b, "type") == "tool_use" {
							uses[event.StringMember(b, "id")] = true
						}
					}
				}
			}
			push("assistant", blocks)
			var results [][]byte
			for i := range f.Entries {
				x := &f.Entries[i]
				if x.Problem == "" && x.Type == "user" && !x.Sidechain {
					for _, b := range elems(x.Content) {
						if id := event.StringMember(b, "tool_use_id"); event.StringMember(b, "type") == "tool_result" && uses[id] && !placed[id] {
							placed[id] = true
							results = append(results, b)
						}
					}
				}
			}
			push("user", results)
		case e.Type == "user":
			var rest [][]byte
			for _, b := range elems(e.Content) {
				if event.StringMember(b, "type") != "tool_result" {
					rest = append(rest, b)
				}
			}
			push("user", rest)
		}
	}
	return out
}

func elems(content json.RawMessage) [][]byte {
	if len(content) > 0 && content[0] == '"' {
		return [][]byte{[]byte(`{"type":"text","text":` + string(content) + `}`)}
	}
	return event.ArrayElements(content)
}

// project turns the messages of an imported log back into Anthropic
// messages: native items as they came, tool calls and results in
// Anthropic's shape, synthetic results left out (Claude Code writes them
// only at its next request), consecutive user messages merged.
func project(t *testing.T, l *importer.Log) []apiMsg {
	s, err := session.Seed(l.Events)
	if err != nil {
		t.Fatal(err)
	}
	var out []apiMsg
	ms := s.Messages()
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		e := l.Events[m.Seq]
		var blocks [][]byte
		if e.Type == event.TypeToolResult {
			meta, _ := event.ObjectMember(e.Data, "meta")
			if v, _ := event.ObjectMember(meta, "synthetic"); string(v) == "true" {
				continue
			}
			var d event.ToolResultData
			json.Unmarshal(e.Data, &d)
			c, _ := json.Marshal(d.Content)
			b, _ := json.Marshal(map[string]any{"type": "tool_result", "tool_use_id": d.CallID, "content": json.RawMessage(c), "is_error": d.IsError})
			blocks = append(blocks, b)
		} else {
			for _, b := range m.Content {
				if native, ok := event.ObjectMember(b, "native"); ok {
					item, _ := event.ObjectMember(native, "item")
					blocks = append(blocks, item)
					continue
				}
				if event.StringMember(b, "type") == "tool-call" {
					x, _ := json.Marshal(map[string]any{"type": "tool_use", "id": event.StringMember(b, "id"), "name": event.StringMember(b, "name"), "input": json.RawMessage(event.StringMember(b, "arguments"))})
					b = x
				}
				blocks = append(blocks, b)
			}
		}
		if n := len(out); n > 0 && out[n-1].role == "user" && string(m.Role) == "user" {
			out[n-1].blocks = append(out[n-1].blocks, blocks...)
			continue
		}
		out = append(out, apiMsg{string(m.Role), blocks})
	}
	return out
}

// render is the one-line form of a message that the .want files hold.
func render(msgs []apiMsg) []string {
	var out []string
	for _, m := range msgs {
		var ss []string
		for _, b := range m.blocks {
			ss = append(ss, renderBlock(b))
		}
		out = append(out, m.role+": "+strings.Join(ss, " | "))
	}
	return out
}

func renderBlock(b []byte) string {
	switch t := event.StringMember(b, "type"); t {
	case "text":
		return event.StringMember(b, "text")
	case "thinking":
		return fmt.Sprintf("thinking %s sig=%s", event.StringMember(b, "thinking"), event.StringMember(b, "signature"))
	case "tool_use":
		var v any
		in, _ := event.ObjectMember(b, "input")
		json.Unmarshal(in, &v)
		x, _ := json.Marshal(v)
		return fmt.Sprintf("tool_use %s %s %s", event.StringMember(b, "id"), event.StringMember(b, "name"), x)
	case "tool_result":
		content, _ := event.ObjectMember(b, "content")
		var ss []string
		for _, c := range elems(content) {
			ss = append(ss, renderBlock(c))
		}
		flag := ""
		if v, _ := event.ObjectMember(b, "is_error"); string(v) == "true" {
			flag = "error "
		}
		return fmt.Sprintf("tool_result %s %s%s", event.StringMember(b, "tool_use_id"), flag, strings.Join(ss, " | "))
	default:
		return t
	}
}

func want(t *testing.T, path string) (findings, resend []string, hasResend bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cur *[]string
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		switch line {
		case "# findings":
			cur = &findings
		case "# resend":
			cur, hasResend = &resend, true
		default:
			*cur = append(*cur, line)
		}
	}
	return findings, resend, hasResend
}

// TestFiles runs the transcripts written by hand from the format's
// description (testdata/*.jsonl): Check reports exactly the .want file's
// findings; a file with a resend section imports, passes strict mode, and
// its messages are the conversation listed, which the independent
// reconstruction rebuilds too.
func TestFiles(t *testing.T) {
	paths, _ := filepath.Glob("testdata/*.jsonl")
	if len(paths) < 9 {
		t.Fatalf("%d test files", len(paths))
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := claudecode.Parse(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			wantFindings, wantResend, hasResend := want(t, strings.TrimSuffix(path, ".jsonl")+".want")
			var got []string
			for _, x := range claudecode.Check(f) {
				got = append(got, fmt.Sprintf("%d %s", x.Line, x.Code))
			}
			if d := cmp.Diff(wantFindings, got); d != "" {
				t.Errorf("findings (-want +got):\n%s", d)
			}
			if !hasResend {
				return
			}
			l, err := claudecode.Import(f)
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			if bad := l.CheckStrict(); bad != nil {
				t.Fatalf("the imported log breaks strict mode: %v", bad)
			}
			if d := cmp.Diff(wantResend, render(rebuild(f))); d != "" {
				t.Errorf("the reconstruction (-want +got):\n%s", d)
			}
			if d := cmp.Diff(wantResend, render(project(t, l))); d != "" {
				t.Errorf("the imported messages (-want +got):\n%s", d)
			}
		})
	}
}
