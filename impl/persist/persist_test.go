package persist

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/model"
)

func hdr(id string) Header { return Header{ID: id, CreatedAt: 1767225600000} }

type backend struct {
	name string
	open func(t testing.TB, path string) Store
	file string
}

// requireSQLite skips a test of the SQLite store in a build without cgo.
func requireSQLite(t testing.TB) {
	t.Helper()
	if !SQLiteAvailable {
		t.Skip("built without cgo: no SQLite store")
	}
}

// backends are the file stores this build has.
var backends = fileBackends()

func fileBackends() []backend {
	all := allBackends
	if !SQLiteAvailable {
		all = all[:1]
	}
	return all
}

var allBackends = []backend{
	{"jsonl", func(t testing.TB, path string) Store {
		s, err := OpenJSONL(context.Background(), path, hdr("s1"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, "s.jsonl"},
	{"sqlite", func(t testing.TB, path string) Store {
		s, err := OpenSQLite(context.Background(), path, hdr("s1"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, "s.db"},
}

func clock() session.Option {
	var now int64 = 1767225600000
	return session.WithClock(func() int64 { now++; return now })
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

const (
	userData = `{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`
	turnOpen = `{"turn":1,"trigger":{"kind":"message"}}`
)

func assistantCalls(ids ...string) string {
	var blocks []string
	for _, id := range ids {
		blocks = append(blocks, `{"type":"tool-call","id":"`+id+`","name":"ls","arguments":"{}"}`)
	}
	return `{"turn":1,"step":1,"content":[` + strings.Join(blocks, ",") + `]}`
}

func toolCall(id string) string {
	return `{"turn":1,"step":1,"callId":"` + id + `","name":"ls","arguments":"{}"}`
}

func toolResult(id string) string {
	return `{"turn":1,"step":1,"callId":"` + id + `","content":[],"isError":false}`
}

// crashedTurn appends a turn that a crash interrupted: two calls, one
// answered, one not.
func crashedTurn(t testing.TB, s interface {
	Append(context.Context, event.Data, ...event.Intent) (event.Event, error)
}) {
	t.Helper()
	steps := []struct {
		ty     event.Type
		data   string
		intent *event.Intent
	}{
		{event.TypeTurnStart, turnOpen, nil},
		{event.TypeUserMessage, userData, &event.Intent{Op: event.Append()}},
		{event.TypeStepStart, `{"turn":1,"step":1}`, nil},
		{event.TypeAssistantMessage, assistantCalls("a", "b"), &event.Intent{Op: event.Append()}},
		{event.TypeToolCall, toolCall("a"), nil},
		{event.TypeToolCall, toolCall("b"), nil},
		{event.TypeToolResult, toolResult("a"), &event.Intent{Op: event.Append(), Sources: []int64{4}}},
	}
	for _, st := range steps {
		if _, err := s.Append(context.Background(), event.Raw{Type: st.ty, Data: raw(st.data)}, st.intent.Value()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRoundTripAndRepair: STORE-3, STORE-7, REP-3, REP-5 on both backends.
func TestRoundTripAndRepair(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), b.file)
			st := b.open(t, path)
			s, rep, err := Resume(context.Background(), st, clock())
			if err != nil || len(rep.Closers) != 0 {
				t.Fatalf("resume of a new store: %v %v", rep, err)
			}
			crashedTurn(t, s)
			written := s.Events()
			if err := st.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			st = b.open(t, path)
			if got := st.Events(); !sameJSON(got, written) {
				t.Fatalf("reloaded events differ")
			}
			s, rep, err = Resume(context.Background(), st, clock())
			if err != nil {
				t.Fatal(err)
			}
			var types []event.Type
			for _, c := range rep.Closers {
				types = append(types, c.Type)
			}
			if want := []event.Type{event.TypeToolResult, event.TypeStepEnd, event.TypeTurnEnd}; !equalTypes(types, want) {
				t.Fatalf("closers %v, want %v", types, want)
			}
			if !sameJSON(rep.Closers, model.Closers(written)) {
				t.Fatalf("closers differ from the model")
			}
			if rep.Closers[0].Sources[0] != 5 || rep.Closers[0].Time != written[len(written)-1].Time {
				t.Fatalf("closer %+v", rep.Closers[0])
			}
			st.Close(context.Background())
			// REP-5: a second resume repairs nothing.
			st = b.open(t, path)
			defer st.Close(context.Background())
			_, rep, err = Resume(context.Background(), st, clock())
			if err != nil || len(rep.Closers) != 0 {
				t.Fatalf("second repair: %v %v", rep.Closers, err)
			}
			if st.Report().Events != len(written)+3 {
				t.Fatalf("closers were not persisted")
			}
		})
	}
}

func equalTypes(a, b []event.Type) bool {
	return strings.Join(toStrings(a), ",") == strings.Join(toStrings(b), ",")
}

func toStrings(ts []event.Type) []string {
	var out []string
	for _, t := range ts {
		out = append(out, string(t))
	}
	return out
}

func sameJSON(a, b []event.Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, err1 := a[i].MarshalJSON()
		y, err2 := b[i].MarshalJSON()
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			return false
		}
	}
	return true
}

// TestRepairSkipsShadowedCalls: REP-4. A compaction during the crashed
// turn shadowed the assistant message holding call "b": no tool/result
// closer for it, but the turn is closed.
func TestRepairSkipsShadowedCalls(t *testing.T) {
	s := session.New(clock())
	crashedTurn(t, s)
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeContextMessage, Data: raw(`{"content":[],"source":{"kind":"compaction"}}`)}, event.Intent{Op: event.Replace(1, 6), Sources: []int64{1, 3, 6}}); err != nil {
		t.Fatal(err)
	}
	closers, err := s.Repair(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !equalTypes(typesOf(closers), []event.Type{event.TypeStepEnd, event.TypeTurnEnd}) {
		t.Fatalf("closers %v", typesOf(closers))
	}
	if !sameJSON(closers, model.Closers(s.Events()[:len(s.Events())-2])) {
		t.Fatalf("differs from the model")
	}
}

func typesOf(es []event.Event) []event.Type {
	var out []event.Type
	for _, e := range es {
		out = append(out, e.Type)
	}
	return out
}

// TestRejections: each typed error of STORE-1, STORE-2, STORE-4, STORE-5,
// and the file is unchanged afterwards.
func TestRejections(t *testing.T) {
	requireSQLite(t)
	dir := t.TempDir()
	check := func(name, path string, code event.Code, open func() error) {
		t.Helper()
		before, _ := os.ReadFile(path)
		err := open()
		if !errors.Is(err, code) {
			t.Errorf("%s: got %v, want %s", name, err, code)
		}
		// A refusal of the whole file names no event of it.
		whole := code == event.CodePersistFormatVersion || code == event.CodePersistNotASession || code == event.CodePersistLocked || code == event.CodePersistSchemaVersion
		if whole && !isErr(err, code, -1) {
			t.Errorf("%s: %#v names an event", name, err)
		}
		after, _ := os.ReadFile(path)
		if !bytes.Equal(before, after) {
			t.Errorf("%s: the file changed", name)
		}
	}
	// persist.format_version
	p := filepath.Join(dir, "v1.jsonl")
	os.WriteFile(p, []byte(`{"type":"session","version":1,"id":"x","createdAt":1}`+"\n"), 0o644)
	check("format version", p, event.CodePersistFormatVersion, func() error { _, err := OpenJSONL(context.Background(), p, hdr("x")); return err })
	// persist.corrupt: a damaged line in the middle
	p = filepath.Join(dir, "mid.jsonl")
	good := `{"type":"todo/write","seq":%d,"time":1,"data":{"todos":[]}}`
	os.WriteFile(p, []byte(`{"type":"session","version":0,"id":"x","createdAt":1}`+"\n"+
		strings.Replace(good, "%d", "0", 1)+"\n{garbage\n"+strings.Replace(good, "%d", "2", 1)+"\n"), 0o644)
	check("mid-file damage", p, event.CodePersistCorrupt, func() error { _, err := OpenJSONL(context.Background(), p, hdr("x")); return err })
	// a rule broken on disk: the rule's code (STORE-3), nothing loaded
	p = filepath.Join(dir, "gap.jsonl")
	os.WriteFile(p, []byte(`{"type":"session","version":0,"id":"x","createdAt":1}`+"\n"+strings.Replace(good, "%d", "1", 1)+"\n"), 0o644)
	check("seq gap", p, event.CodeSeqNotContiguous, func() error {
		st, err := OpenJSONL(context.Background(), p, hdr("x"))
		if err != nil {
			return err
		}
		defer st.Close(context.Background())
		_, _, err = Resume(context.Background(), st)
		return err
	})
	// persist.locked: a second writer, JSONL and SQLite
	for _, b := range backends {
		p := filepath.Join(dir, "locked-"+b.file)
		first := b.open(t, p)
		check("second writer "+b.name, p, event.CodePersistLocked, func() error {
			var err error
			if b.name == "jsonl" {
				_, err = OpenJSONL(context.Background(), p, hdr("s1"))
			} else {
				_, err = OpenSQLite(context.Background(), p, hdr("s1"))
			}
			return err
		})
		first.Close(context.Background())
	}
	// persist.schema_version
	p = filepath.Join(dir, "v3.db")
	st, err := OpenSQLite(context.Background(), p, hdr("x"))
	if err != nil {
		t.Fatal(err)
	}
	st.db.Exec(`PRAGMA user_version=3`)
	st.Close(context.Background())
	check("schema version", p, event.CodePersistSchemaVersion, func() error {
		_, err := OpenSQLite(context.Background(), p, hdr("x"))
		if err != nil && !strings.Contains(err.Error(), "3") || err != nil && !strings.Contains(err.Error(), "4") {
			t.Errorf("the error must name both versions: %v", err)
		}
		return err
	})
}

// TestTornTailAndLongLines: STORE-2. A torn last line is reported and cut
// before the next append; lines far over 64 KiB work.
func TestTornTailAndLongLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	st, _ := OpenJSONL(context.Background(), p, hdr("x"))
	s, _, _ := Resume(context.Background(), st, clock())
	long := `{"content":[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}],"source":{"kind":"user"}}`
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: raw(long)}, event.Intent{Op: event.Append()}); err != nil {
		t.Fatal(err)
	}
	st.Close(context.Background())
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"user/mess`)
	f.Close()
	st2, err := OpenJSONL(context.Background(), p, hdr("x"))
	if err != nil {
		t.Fatal(err)
	}
	if st2.Report().TornBytes != int64(len(`{"type":"user/mess`)) || len(st2.Events()) != 1 {
		t.Fatalf("report %+v", st2.Report())
	}
	s2, _, err := Resume(context.Background(), st2, clock())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: raw(userData)}, event.Intent{Op: event.Append()}); err != nil {
		t.Fatal(err)
	}
	st2.Close(context.Background())
	_, events, torn, err := ReadJSONL(p)
	if err != nil || torn != 0 || len(events) != 2 || len(events[0].Data) < 1<<20 {
		t.Fatalf("after append: %d events, torn %d, %v", len(events), torn, err)
	}
}

// TestSQLiteCLI: the stock sqlite3 client reads a database the library
// wrote (STORE-5).
func TestSQLiteCLI(t *testing.T) {
	requireSQLite(t)
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("sqlite3 command-line client not installed")
	}
	p := filepath.Join(t.TempDir(), "cli.db")
	st, _ := OpenSQLite(context.Background(), p, hdr("cli"))
	s, _, _ := Resume(context.Background(), st, clock())
	crashedTurn(t, s)
	st.Close(context.Background())
	out, err := exec.Command("sqlite3", p, ".schema").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "source_event_seqs TEXT") || !strings.Contains(string(out), "STRICT") {
		t.Fatalf(".schema: %s %v", out, err)
	}
	out, err = exec.Command("sqlite3", p, "PRAGMA user_version; SELECT seq, type, surface_op, source_event_seqs FROM events WHERE session_id='cli' ORDER BY seq;").CombinedOutput()
	want := "4\n0|turn/start||\n1|user/message|\"append\"|\n2|step/start||\n3|assistant/message|\"append\"|\n4|tool/call||\n5|tool/call||\n6|tool/result|\"append\"|[4]\n"
	if err != nil || string(out) != want {
		t.Fatalf("SELECT gave:\n%s%v", out, err)
	}
}

// TestForkFromDisk: a fork of a stored session into a new store of the
// other backend goes through the seed constructor (SURF-24, STORE-3).
func TestForkFromDisk(t *testing.T) {
	requireSQLite(t)
	dir := t.TempDir()
	src, _ := OpenSQLite(context.Background(), filepath.Join(dir, "src.db"), hdr("parent"))
	s, _, _ := Resume(context.Background(), src, clock())
	crashedTurn(t, s)
	end, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnEnd, Data: raw(`{"turn":1,"reason":{"kind":"completed"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: raw(userData)}, event.Intent{Op: event.Append()})
	seedLength := end.Seq + 1
	dst, _ := OpenJSONL(context.Background(), filepath.Join(dir, "child.jsonl"), Header{ID: "child", CreatedAt: 1, ParentSession: "parent", SeedLength: &seedLength})
	if _, err := Fork(context.Background(), s, 2, dst); !errors.Is(err, event.CodeForkOpenTurn) {
		t.Fatalf("fork at an open turn: %v", err)
	}
	child, err := Fork(context.Background(), s, end.Seq, dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := child.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: raw(userData)}, event.Intent{Op: event.Append()}); err != nil {
		t.Fatal(err)
	}
	dst.Close(context.Background())
	src.Close(context.Background())
	h, events, _, err := ReadJSONL(filepath.Join(dir, "child.jsonl"))
	if err != nil || h.ParentSession != "parent" || *h.SeedLength != seedLength || len(events) != int(seedLength)+1 {
		t.Fatalf("child file: %+v, %d events, %v", h, len(events), err)
	}
	if !sameJSON(events[:seedLength], s.Events()[:seedLength]) {
		t.Fatalf("the child does not start with the parent's prefix")
	}
}
