package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/released"
	"github.com/surfacelog/surface/impl/released/samples"
	"github.com/surfacelog/surface/impl/session"
)

func call(args ...string) (int, string) {
	var out bytes.Buffer
	code := run(args, &out, &out)
	return code, out.String()
}

// write makes a JSONL file of this library holding events.
func write(t *testing.T, path string, appends func(s *persist.Session)) {
	t.Helper()
	st, err := persist.OpenJSONL(context.Background(), path, persist.Header{ID: "s1", CreatedAt: 7, Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := persist.Resume(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	appends(s)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func messages(t *testing.T, s *session.Session) []string {
	var out []string
	for _, m := range s.Messages().All() {
		var b []string
		for _, c := range m.Content {
			b = append(b, string(c))
		}
		out = append(out, string(m.Role)+":"+strings.Join(b, ","))
	}
	return out
}

// TestRoundTrip (REL-6, REL-7): a session of this library converts to a
// released .jsonl.zstd that the released rules accept with the same
// messages, and back to a JSONL file of this library with the same
// messages again; the input files are not changed and an existing output
// is not overwritten.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	ap := event.AppendIntent()
	write(t, in, func(s *persist.Session) {
		s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: json.RawMessage(`{"turn":1,"trigger":{"kind":"message"}}`)})
		s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(`{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`)}, ap)
		s.Append(context.Background(), event.Raw{Type: event.TypeContextMessage, Data: json.RawMessage(`{"content":[{"type":"text","text":"ctx"}],"source":{"kind":"memory"}}`)}, ap)
		s.Append(context.Background(), event.Raw{Type: event.TypeAssistantMessage, Data: json.RawMessage(`{"turn":1,"step":1,"content":[{"type":"text","text":"hello"}],"provenance":{"provider":"p","model":"m"}}`)}, ap)
		s.Append(context.Background(), event.Raw{Type: event.TypeTurnEnd, Data: json.RawMessage(`{"turn":1,"reason":{"kind":"completed"}}`)})
	})
	before, _ := os.ReadFile(in)
	_, events, _, err := persist.ReadJSONL(in)
	if err != nil {
		t.Fatal(err)
	}
	s0, _ := session.Seed(events)
	want := messages(t, s0)

	rel := filepath.Join(dir, "session.jsonl.zstd")
	if code, out := call("-to", "released", "-zstd", in, rel); code != 0 {
		t.Fatalf("%d %s", code, out)
	}
	data, _ := os.ReadFile(rel)
	l, err := released.Read(data)
	if err != nil || !l.Compressed || l.Header.ID != "s1" || *l.Header.Cwd != "/w" {
		t.Fatalf("%v %+v", err, l)
	}
	checked, err := released.Check(l)
	if err != nil || len(checked.Messages) != 3 || !strings.Contains(string(checked.Messages[1]), `<context source=\"memory\">`) {
		t.Fatalf("%v %s", err, checked.Messages)
	}
	back := filepath.Join(dir, "back.jsonl")
	if code, out := call("-to", "b736", rel, back); code != 0 {
		t.Fatalf("%d %s", code, out)
	}
	_, events2, _, err := persist.ReadJSONL(back)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := session.Seed(events2)
	if err != nil {
		t.Fatal(err)
	}
	if got := messages(t, s2); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("messages after the round trip:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if after, _ := os.ReadFile(in); !bytes.Equal(before, after) {
		t.Fatal("the input changed")
	}
	if code, _ := call("-to", "b736", rel, back); code != 2 {
		t.Fatalf("an existing output: exit %d", code)
	}
}

// TestNotConvertible: an event with no place on the other side fails
// with exit 1, names the event, and writes nothing.
func TestNotConvertible(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	write(t, in, func(s *persist.Session) {
		s.Append(context.Background(), event.Raw{Type: event.TypeContextMessage, Data: json.RawMessage(`{"content":[],"source":{"kind":"memory"},"meta":{"k":1}}`)}, event.Intent{Op: event.Append()})
	})
	out := filepath.Join(dir, "out.jsonl")
	code, msg := call("-to", "released", in, out)
	if code != 1 || !strings.Contains(msg, "convert.not_convertible") || !strings.Contains(msg, "event 0") {
		t.Fatalf("%d %s", code, msg)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("an output was written")
	}
	if code, _ := call("-to", "sideways", in, out); code != 2 {
		t.Fatalf("usage: %d", code)
	}
}

// TestConvertSamples (REL-6): every sample released file (plain, zstd,
// SQLite 14, 15, 17) converts to this library's JSONL, which loads with
// the messages the released rules derive (role and content), and back to
// released JSONL, which the released rules accept with the same messages.
func TestConvertSamples(t *testing.T) {
	dir := t.TempDir()
	inputs := map[string]string{"plain": filepath.Join(dir, "p.jsonl"), "zstd": filepath.Join(dir, "z.jsonl.zstd")}
	os.WriteFile(inputs["plain"], samples.JSONL(false), 0o644)
	os.WriteFile(inputs["zstd"], samples.JSONL(true), 0o644)
	for _, v := range released.SchemaVersions {
		p := filepath.Join(dir, fmt.Sprintf("s%d.db", v))
		db, err := samples.SQLite(p, v)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		inputs[fmt.Sprint("sqlite", v)] = p
	}
	l, _ := released.Read(samples.JSONL(false))
	want, _ := released.Check(l)
	for name, in := range inputs {
		out := filepath.Join(dir, name+".out.jsonl")
		if code, msg := call("-to", "b736", in, out); code != 0 {
			t.Fatalf("%s: %d %s", name, code, msg)
		}
		_, events, _, err := persist.ReadJSONL(out)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s, err := session.Seed(events)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := messages(t, s)
		if len(got) != len(want.Messages) {
			t.Fatalf("%s: %d messages, want %d", name, len(got), len(want.Messages))
		}
		for i, m := range want.Messages {
			var r struct {
				Role    string
				Content []json.RawMessage
			}
			json.Unmarshal(m, &r)
			var parts []string
			for _, c := range r.Content {
				parts = append(parts, string(c))
			}
			if got[i] != r.Role+":"+strings.Join(parts, ",") {
				t.Fatalf("%s: message %d is %s, the released one %s", name, i, got[i], m)
			}
		}
		again := filepath.Join(dir, name+".again.jsonl")
		if code, msg := call("-to", "released", out, again); code != 0 {
			t.Fatalf("%s back: %d %s", name, code, msg)
		}
		b, _ := os.ReadFile(again)
		rl, err := released.Read(b)
		if err != nil {
			t.Fatal(err)
		}
		back, err := released.Check(rl)
		if err != nil || len(back.Messages) != len(want.Messages) {
			t.Fatalf("%s back: %v", name, err)
		}
		for i := range back.Messages {
			if !bytes.Equal(back.Messages[i], want.Messages[i]) {
				t.Fatalf("%s back: message %d is %s, want %s", name, i, back.Messages[i], want.Messages[i])
			}
		}
	}
}

// TestErrorsNameTheInputsFault: what sessionconvert says and its exit
// status for inputs at fault (one exit-status table with validate,
// docs/cli.md; TestValidateExitCodes has the same files): an input breaking a rule is INVALID
// with the input's own code, never convert.not_convertible; an empty file
// is not a session log (1, as validate); a torn last line is reported,
// not dropped without a word; a missing output directory is named by the
// output's name, never a temporary file's; a cause is said once.
func TestErrorsNameTheInputsFault(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	header := `{"type":"session","version":0,"id":"c","createdAt":1}` + "\n"
	turn := `{"seq":0,"time":1,"type":"turn/start","data":{"turn":1,"trigger":{"kind":"message"}}}` + "\n"
	cases := []struct {
		name, in, out string
		code          int
		want, not     []string
	}{
		{"breaks a rule", file("invalid.jsonl", header+`{"seq":0,"time":1,"type":"user/message","data":{"content":[],"source":{"kind":"user"}}}`+"\n"), "o1.jsonl", 1,
			[]string{"INVALID", "surface.op_missing"}, []string{"not_convertible"}},
		{"short child", file("short.jsonl", `{"type":"session","version":0,"id":"c","createdAt":1,"parentSession":"p","seedLength":2}`+"\n"+turn), "o2.jsonl", 1,
			[]string{"INVALID", "persist.fork_incomplete"}, nil},
		{"empty", file("empty.jsonl", ""), "o3.jsonl", 1, []string{"INVALID", "persist.not_a_session"}, nil},
		{"torn tail", file("torn.jsonl", header+turn+`{"seq":1,"ti`), "o4.jsonl", 0, []string{"torn last line of 12 bytes", "not converted"}, nil},
		{"no output directory", filepath.Join(dir, "torn.jsonl"), filepath.Join("nodir", "o5.jsonl"), 2, []string{"nodir/o5.jsonl", "no such file or directory"}, []string{".sessionconvert-"}},
		{"missing input", filepath.Join(dir, "missing.jsonl"), "o6.jsonl", 2, []string{"missing.jsonl: no such file or directory"}, []string{"missing.jsonl: open"}},
	}
	for _, c := range cases {
		code, out := call("-to", "released", c.in, filepath.Join(dir, c.out))
		if code != c.code {
			t.Errorf("%s: exit %d, want %d:\n%s", c.name, code, c.code, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the report does not say %q:\n%s", c.name, w, out)
			}
		}
		for _, n := range c.not {
			if strings.Contains(out, n) {
				t.Errorf("%s: the report says %q:\n%s", c.name, n, out)
			}
		}
	}
}
