package claudecode_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/importer"
	"github.com/surfacelog/surface/impl/importer/claudecode"
)

// TestTreeCodes (IMP-5): the rules of the entry tree, each matched by errors.Is,
// with a look-alike beside each that breaks none.
func TestTreeCodes(t *testing.T) {
	e := func(typ, uuid, parent, extra string) string {
		p := `null`
		if parent != "" {
			p = `"` + parent + `"`
		}
		msg := `"message":{"role":"user","content":"hi"}`
		if typ == "assistant" {
			msg = `"message":{"id":"m_` + uuid + `","role":"assistant","model":"claude-x","content":[{"type":"text","text":"ok"}]}`
		}
		return `{"type":"` + typ + `","uuid":"` + uuid + `","parentUuid":` + p + `,"sessionId":"S","isSidechain":false,` + msg + extra + `}`
	}
	cases := []struct {
		name  string
		lines []string
		code  event.Code
		line  int // 0: no finding
	}{
		{"sidechain on the chain", []string{e("user", "u1", "", ""), `{"type":"user","uuid":"s1","parentUuid":"u1","sessionId":"S","isSidechain":true,"message":{"role":"user","content":"sub"}}`, e("assistant", "a1", "s1", "")}, event.CodeImportSidechainMixed, 2},
		{"sidechain beside it", []string{e("user", "u1", "", ""), `{"type":"user","uuid":"s1","parentUuid":"u1","sessionId":"S","isSidechain":true,"message":{"role":"user","content":"sub"}}`, e("assistant", "a1", "u1", "")}, "", 0},
		{"identical repeat", []string{e("user", "u1", "", ""), e("assistant", "a1", "u1", ""), e("assistant", "a1", "u1", "")}, "", 0},
		{"conflicting repeat", []string{e("user", "u1", "", ""), e("assistant", "a1", "u1", ""), e("assistant", "a1", "u1", `,"x":1`)}, event.CodeImportUUIDConflict, 3},
		{"first entry points outside", []string{e("user", "u1", "outside", ""), e("assistant", "a1", "u1", "")}, "", 0},
		{"later entry points outside", []string{e("user", "u1", "", ""), e("assistant", "a1", "outside", "")}, event.CodeImportParentMissing, 2},
		{"a cycle", []string{e("user", "u1", "", ""), e("user", "x", "y", ""), e("user", "y", "x", ""), e("assistant", "a1", "u1", "")}, event.CodeImportParentCycle, 2},
		{"another session", []string{e("user", "u1", "", ""), strings.Replace(e("assistant", "a1", "u1", ""), `"S"`, `"T"`, 1)}, event.CodeImportSessionMismatch, 2},
		{"no conversation", []string{`{"type":"summary","summary":"t","leafUuid":"x"}`}, event.CodeImportNoSession, 0},
	}
	for _, c := range cases {
		f, err := claudecode.Parse(strings.NewReader(strings.Join(c.lines, "\n") + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		fs := claudecode.Check(f)
		if c.code == "" {
			if len(fs) != 0 {
				t.Errorf("%s: %v", c.name, fs)
			}
			continue
		}
		found := false
		for _, x := range fs {
			if errors.Is(x, c.code) && x.Line == c.line {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want %s at line %d, got %v", c.name, c.code, c.line, fs)
		}
	}
}

// TestRefused: a block with no place is refused by name at its line.
func TestRefused(t *testing.T) {
	for _, c := range []struct {
		content string
		ok      bool
	}{
		{`[{"type":"document","source":{"type":"base64","data":"x"}}]`, false},
		{`[{"type":"image","source":{"type":"file","file_id":"f"}}]`, false},
		{`[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]`, true},
		{`[{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]`, true},
	} {
		file := `{"type":"user","uuid":"u0","parentUuid":null,"sessionId":"S","message":{"role":"user","content":"start"}}` + "\n" +
			`{"type":"user","uuid":"u1","parentUuid":"u0","sessionId":"S","message":{"role":"user","content":` + c.content + `}}` + "\n"
		f, _ := claudecode.Parse(strings.NewReader(file))
		_, err := claudecode.Import(f)
		var x importer.Finding
		if c.ok != (err == nil) {
			t.Errorf("%s: %v", c.content, err)
		}
		if !c.ok && (!errors.As(err, &x) || x.Line != 2 || !errors.Is(err, event.CodeImportNotImportable)) {
			t.Errorf("%s: got %v, want import.not_importable at line 2", c.content, err)
		}
	}
}
