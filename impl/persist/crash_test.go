package persist

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/internal/ops"
	"github.com/surfacelog/surface/model"
)

type scripted struct {
	ty     event.Type
	data   string
	intent *event.Intent
}

func ap(sources ...int64) *event.Intent { return &event.Intent{Op: event.Append(), Sources: sources} }

// scenario is realistic traffic: turns with chunks, tool calls and
// results, a compaction replace, and a crash-prone open turn at the end.
func scenario() []scripted {
	var out []scripted
	seq := int64(0)
	add := func(ty event.Type, data string, intent *event.Intent) int64 {
		out = append(out, scripted{ty, data, intent})
		seq++
		return seq - 1
	}
	for turn := 1; turn <= 4; turn++ {
		tn := strconv.Itoa(turn)
		add(event.TypeTurnStart, `{"turn":`+tn+`,"trigger":{"kind":"message"}}`, nil)
		u := add(event.TypeUserMessage, userData, ap())
		add(event.TypeStepStart, `{"turn":`+tn+`,"step":1}`, nil)
		c := add(event.TypeAssistantChunk, `{"turn":`+tn+`,"step":1,"chunk":{"delta":"x"}}`, nil)
		m := add(event.TypeAssistantMessage, `{"turn":`+tn+`,"step":1,"content":[{"type":"tool-call","id":"c`+tn+`","name":"ls","arguments":"{}"},{"type":"tool-call","id":"d`+tn+`","name":"ls","arguments":"{}"}]}`, ap(c))
		tc := add(event.TypeToolCall, `{"turn":`+tn+`,"step":1,"callId":"c`+tn+`","name":"ls","arguments":"{}"}`, nil)
		add(event.TypeToolResult, `{"turn":`+tn+`,"step":1,"callId":"c`+tn+`","content":[],"isError":false}`, ap(tc))
		td := add(event.TypeToolCall, `{"turn":`+tn+`,"step":1,"callId":"d`+tn+`","name":"ls","arguments":"{}"}`, nil)
		add(event.TypeToolResult, `{"turn":`+tn+`,"step":1,"callId":"d`+tn+`","content":[],"isError":false}`, ap(td))
		add(event.TypeStepEnd, `{"turn":`+tn+`,"step":1}`, nil)
		if turn == 2 { // compaction: replace the first user message and the assistant message of turn 1
			add(event.TypeContextMessage, `{"content":[{"type":"text","text":"summary"}],"source":{"kind":"compaction"}}`, &event.Intent{Op: event.Replace(1, 4), Sources: []int64{1, 4}})
		}
		add(event.TypeTurnEnd, `{"turn":`+tn+`,"reason":{"kind":"completed"}}`, nil)
		_, _ = u, m
	}
	return out
}

// checkRecovered opens a crashed store, resumes it, and compares with the
// model: the loaded events are a prefix of what was written holding at
// least the `acked` events (and at most `most`), and the closers and the
// derived state equal the model's.
func checkRecovered(t *testing.T, st Store, all []event.Event, acked, most int) (lost int) {
	t.Helper()
	loaded := st.Events()
	if len(loaded) < acked {
		return acked - len(loaded)
	}
	if len(loaded) > most || len(loaded) > len(all) || !sameJSON(loaded, all[:len(loaded)]) {
		t.Fatalf("loaded %d events that are not a prefix of what was written (acked %d)", len(loaded), acked)
	}
	s, rep, err := Resume(context.Background(), st, clock())
	if err != nil {
		t.Fatalf("resume after crash: %v", err)
	}
	want := model.Closers(loaded)
	if !sameJSON(rep.Closers, want) {
		t.Fatalf("closers differ from the model after %d events", len(loaded))
	}
	ms, err := model.Derive(append(append([]event.Event(nil), loaded...), want...))
	if err != nil {
		t.Fatal(err)
	}
	got := ops.StateOf(s.Session)
	if !ops.EqualState(ops.State{Events: ms.Log, Surface: ms.Surface, Messages: ms.Messages}, got) {
		t.Fatalf("state after recovery differs from the model")
	}
	// The store takes appends again and the file reloads cleanly.
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: raw(`{"todos":[]}`)}); err != nil {
		t.Fatalf("append after recovery: %v", err)
	}
	return 0
}

// ruleBreakers are complete last lines that are JSON but break a rule:
// never a torn tail (STORE-2), so nothing may be cut.
func ruleBreakers(seq int) []string {
	n := strconv.Itoa(seq)
	return []string{
		`{"type":"todo/write","seq":` + n + `,"time":1,"data":{"todos":[]},"writtenBy":"a newer build"}` + "\n",
		`{"type":"x/from-the-future","seq":` + n + `,"time":1,"data":{}}` + "\n",
		`{"type":"todo/write","seq":` + n + `,"time":1,"data":{"todos":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}` + "\n",
	}
}

// TestCrashEveryByteOffset: the JSONL crash simulator. The file of a whole
// scenario is cut at every byte offset, reopened, repaired and checked
// against the model: no acknowledged event is lost (STORE-2, STORE-6,
// STORE-7, STORE-8, REP-3). A cut inside the header is refused as not a
// session log, unchanged (STORE-9); a torn last line is quarantined byte
// for byte. At every line boundary, a complete last line that breaks a
// rule is added instead: the open or resume fails with a typed error and
// the file keeps every byte.
func TestCrashEveryByteOffset(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "full.jsonl")
	st, err := OpenJSONL(context.Background(), path, hdr("crash"))
	if err != nil {
		t.Fatal(err)
	}
	s, _, _ := Resume(context.Background(), st, clock())
	headerSize, _ := os.Stat(path)
	ends := []int64{headerSize.Size()} // file size after each acknowledged append
	for _, sc := range scenario() {
		if _, err := s.Append(context.Background(), event.Raw{Type: sc.ty, Data: raw(sc.data)}, sc.intent.Value()); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(path)
		ends = append(ends, fi.Size())
	}
	all := s.Events()
	st.Close(context.Background())
	full, _ := os.ReadFile(path)
	offsets, lost, refused, quarantined, kept := 0, 0, 0, 0, 0
	for k := int64(0); k <= int64(len(full)); k = nextOffset(k, ends, int64(len(full))) {
		acked := 0
		for acked+1 < len(ends) && ends[acked+1] <= k {
			acked++
		}
		sub := t.TempDir()
		p := filepath.Join(sub, "cut.jsonl")
		os.WriteFile(p, full[:k], 0o644)
		cut, err := OpenJSONL(context.Background(), p, hdr("crash"), WithSync(SyncNever))
		if k < ends[0] {
			// A cut inside the header: our writer creates files
			// atomically, so this is not a file it wrote.
			if !isErr(err, event.CodePersistNotASession, -1) {
				t.Fatalf("offset %d (inside the header): %v, want persist.not_a_session", k, err)
			}
			if b, _ := os.ReadFile(p); !bytes.Equal(b, full[:k]) {
				t.Fatalf("offset %d: the refused file changed", k)
			}
			refused++
			continue
		}
		if err != nil {
			t.Fatalf("offset %d: %v", k, err)
		}
		if torn := k - ends[acked]; torn > 0 {
			q, qerr := os.ReadFile(cut.Report().Quarantine)
			if qerr != nil || !bytes.Equal(q, full[ends[acked]:k]) {
				t.Fatalf("offset %d: quarantine %q holds %q (%v), want the %d torn bytes", k, cut.Report().Quarantine, q, qerr, torn)
			}
			quarantined++
		}
		// Cut at a byte offset: exactly the complete lines are there.
		lost += checkRecovered(t, cut, all, acked, acked)
		cut.Close(context.Background())
		offsets++
		if k != ends[acked] {
			continue
		}
		for _, bad := range ruleBreakers(acked) {
			content := append(append([]byte(nil), full[:k]...), bad...)
			os.WriteFile(p, content, 0o644)
			os.Remove(p + ".torn-" + strconv.FormatInt(k, 10))
			st, err := OpenJSONL(context.Background(), p, hdr("crash"))
			if err == nil {
				_, _, err = Resume(context.Background(), st, clock())
				st.Close(context.Background())
			}
			if c := event.CodeOf(err); c == "" || c == event.CodePersistCorrupt || !strings.Contains(err.Error(), "line "+strconv.Itoa(acked+2)) {
				t.Fatalf("offset %d, complete rule-breaking last line: %v, want a rule's code naming line %d", k, err, acked+2)
			}
			if b, _ := os.ReadFile(p); !bytes.Equal(b, content) {
				t.Fatalf("offset %d: a complete rule-breaking last line was cut", k)
			}
			if _, err := os.Stat(p + ".torn-" + strconv.FormatInt(k, 10)); err == nil {
				t.Fatalf("offset %d: a complete rule-breaking last line was quarantined", k)
			}
			kept++
		}
	}
	t.Logf("JSONL crash simulator: %d byte offsets tried over %d events (%d inside the header refused, %d torn tails quarantined), events lost: %d; %d complete rule-breaking last lines kept with a typed error",
		offsets+refused, len(all), refused, quarantined, lost, kept)
	if lost != 0 {
		t.Fatalf("%d acknowledged events lost", lost)
	}
}

// TestCrashKilledWriter kills a real writer process (SIGKILL) after each
// acknowledged append, for both backends: every transaction boundary of
// SQLite and every line of JSONL; each as it syncs by default and
// committing in groups (two windows), 276 kills in all, 184 of them of a
// store committing in groups.
// killWriterAfter runs TestCrashWriterProcess as a writer process with the
// environment env, kills it with SIGKILL once it has acknowledged k
// appends (or stopped acknowledging), and returns how many it acknowledged.
func killWriterAfter(t *testing.T, k int, env ...string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWriterProcess$")
	cmd.Env = append(os.Environ(), env...)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewScanner(out)
	acked := 0
	for acked < k && r.Scan() {
		if r.Text() == fmt.Sprintf("ack %d", acked) {
			acked++
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	return acked
}

func TestCrashKilledWriter(t *testing.T) {
	if os.Getenv("SURFACE_CRASH_WRITER") != "" {
		return // running as the writer: see TestCrashWriterProcess
	}
	n := len(scenario())
	// Each backend as it syncs by default, and committing in groups
	// (SyncGroup): a killed process loses nothing either way.
	type writer struct {
		name string
		b    backend
	}
	var writers []writer
	for _, b := range backends {
		writers = append(writers, writer{b.name, b}, writer{b.name + "-group", b}, writer{b.name + "-group-small", b})
	}
	for _, w := range writers {
		b := w.b
		t.Run(w.name, func(t *testing.T) {
			lost, kept := 0, 0
			var all []event.Event
			for k := 0; k <= n; k = nextKill(k, n) {
				path := filepath.Join(t.TempDir(), b.file)
				acked := killWriterAfter(t, k, "SURFACE_CRASH_WRITER="+w.name, "SURFACE_CRASH_PATH="+path)
				kept += checkRuleBreakingTail(t, b.name, path)
				st := b.open(t, path)
				if all == nil || len(st.Events()) > len(all) {
					all = referenceEvents(t)
				}
				// The writer may have gone on past the last ack it printed.
				lost += checkRecovered(t, st, all, acked, n)
				st.Close(context.Background())
			}
			t.Logf("%s: writer killed at %d transaction boundaries, events lost: %d; %d complete rule-breaking last events kept with a typed error", w.name, n+1, lost, kept)
			if lost != 0 {
				t.Fatalf("%d acknowledged events lost", lost)
			}
		})
	}
}

// checkRuleBreakingTail adds, to a copy of the store a killed writer left,
// a complete last event that breaks a rule, and checks that resuming it
// fails with a typed error and changes no byte (STORE-2, STORE-9).
func checkRuleBreakingTail(t *testing.T, backend, path string) (kept int) {
	t.Helper()
	orig, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0 // killed before it created the store: nothing was acknowledged
	}
	if err != nil {
		t.Fatal(err)
	}
	var events int
	if backend == "jsonl" {
		_, evs, _, err := ReadJSONL(path)
		if err != nil {
			t.Fatal(err)
		}
		events = len(evs)
	}
	for i, bad := range ruleBreakers(0) {
		p := filepath.Join(t.TempDir(), "copy-"+strconv.Itoa(i)+filepath.Ext(path))
		var content []byte
		if backend == "jsonl" {
			bad = strings.Replace(bad, `"seq":0,`, `"seq":`+strconv.Itoa(events)+`,`, 1)
			if !bytes.HasSuffix(orig, []byte("\n")) { // the writer died mid-line: that line is torn
				continue
			}
			content = append(append([]byte(nil), orig...), bad...)
			os.WriteFile(p, content, 0o644)
		} else {
			copySQLite(t, path, p)
			db, _ := sql.Open("sqlite3", "file:"+p)
			var e event.Event
			var next int64
			db.QueryRow(`SELECT COUNT(*) FROM events WHERE session_id = 's1'`).Scan(&next)
			ev, derr := event.Decode([]byte(strings.TrimSuffix(bad, "\n")))
			if derr != nil { // not an event at all: SQLite columns cannot hold it
				db.Close()
				continue
			}
			e = ev
			if _, err := db.Exec(`INSERT INTO events (session_id, seq, type, time, data) VALUES ('s1', ?, ?, 1, ?)`, next, string(e.Type), string(e.Data)); err != nil {
				t.Fatal(err)
			}
			db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
			db.Close()
			content, _ = os.ReadFile(p)
		}
		var st Store
		if backend == "jsonl" {
			st, err = OpenJSONL(context.Background(), p, hdr("s1"))
		} else {
			st, err = OpenSQLite(context.Background(), p, hdr("s1"))
		}
		if err == nil {
			_, _, err = Resume(context.Background(), st, clock())
			st.Close(context.Background())
		}
		if c := event.CodeOf(err); c == "" || c == event.CodePersistCorrupt {
			t.Fatalf("%s: a complete rule-breaking last event: %v, want a rule's code", backend, err)
		}
		if b, _ := os.ReadFile(p); !bytes.Equal(b, content) {
			t.Fatalf("%s: the store with a rule-breaking last event changed", backend)
		}
		kept++
	}
	return kept
}

// copySQLite copies a database a killed writer left (with its WAL).
func copySQLite(t *testing.T, from, to string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(from + suffix)
		if err != nil {
			continue
		}
		if err := os.WriteFile(to+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// referenceEvents is the scenario as stored, with the writer's clock.
func referenceEvents(t *testing.T) []event.Event {
	p := filepath.Join(t.TempDir(), "ref.jsonl")
	st, _ := OpenJSONL(context.Background(), p, hdr("crash"))
	defer st.Close(context.Background())
	s, _, _ := Resume(context.Background(), st, clock())
	for _, sc := range scenario() {
		if _, err := s.Append(context.Background(), event.Raw{Type: sc.ty, Data: raw(sc.data)}, sc.intent.Value()); err != nil {
			t.Fatal(err)
		}
	}
	return s.Events()
}

// TestCrashWriterProcess is the writer that TestCrashKilledWriter kills.
func TestCrashWriterProcess(t *testing.T) {
	kind := os.Getenv("SURFACE_CRASH_WRITER")
	if kind == "" {
		t.Skip("only runs as a child of TestCrashKilledWriter")
	}
	path := os.Getenv("SURFACE_CRASH_PATH")
	var st Store
	var err error
	switch kind {
	case "jsonl":
		st, err = OpenJSONL(context.Background(), path, hdr("s1"))
	case "jsonl-group":
		st, err = OpenJSONL(context.Background(), path, hdr("s1"), WithSyncWindow(time.Hour, 2048))
	case "jsonl-group-small": // a window of one or two events, and of a millisecond
		st, err = OpenJSONL(context.Background(), path, hdr("s1"), WithSyncWindow(time.Millisecond, 200))
	case "sqlite":
		st, err = OpenSQLite(context.Background(), path, hdr("s1"))
	case "sqlite-group":
		st, err = OpenSQLite(context.Background(), path, hdr("s1"), WithSQLiteSyncWindow(time.Hour, 2048))
	case "sqlite-group-small":
		st, err = OpenSQLite(context.Background(), path, hdr("s1"), WithSQLiteSyncWindow(time.Millisecond, 200))
	default: // postgres: path names the session
		st, err = OpenPostgres(context.Background(), os.Getenv("SURFACE_PG_URL"), hdr(path), WithPostgresSchema(os.Getenv("SURFACE_CRASH_SCHEMA")))
	}
	if err != nil {
		if kind == "postgres" && isErr(err, event.CodePersistLocked, -1) {
			fmt.Println("locked") // the race test counts these
			return
		}
		t.Fatal(err)
	}
	s, _, err := Resume(context.Background(), st, clock())
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(os.Stdout)
	for i, sc := range scenario() {
		if _, err := s.Append(context.Background(), event.Raw{Type: sc.ty, Data: raw(sc.data)}, sc.intent.Value()); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(w, "ack %d\n", i)
		w.Flush()
	}
	for { // wait to be killed (not select{}: without cgo the runtime ends a process whose goroutines all block, releasing its lock)
		time.Sleep(time.Hour)
	}
}

// faultFile injects one kind of failure into the JSONL store's file.
type faultFile struct {
	File
	mode     string // "short", "enospc", "sync", "sync+truncate"
	armed    bool
	failures int
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if f.armed && f.mode == "short" {
		f.failures++
		n, _ := f.File.WriteAt(p[:len(p)/2], off)
		return n, nil
	}
	if f.armed && f.mode == "enospc" {
		f.failures++
		n, _ := f.File.WriteAt(p[:len(p)/3], off)
		return n, syscall.ENOSPC
	}
	return f.File.WriteAt(p, off)
}

func (f *faultFile) Sync() error {
	if f.armed && (f.mode == "sync" || f.mode == "sync+truncate") {
		f.failures++
		return syscall.EIO
	}
	return f.File.Sync()
}

func (f *faultFile) Truncate(size int64) error {
	if f.armed && f.mode == "sync+truncate" {
		return syscall.EIO
	}
	return f.File.Truncate(size)
}

// TestFaultInjection: short writes, a full disk, a failing fsync (and a
// failing rollback): the append reports persist.io, the session does not
// change, and the file still loads with exactly the acknowledged events
// (STORE-6).
func TestFaultInjection(t *testing.T) {
	for _, mode := range []string{"short", "enospc", "sync", "sync+truncate"} {
		t.Run(mode, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f.jsonl")
			var ff *faultFile
			st, err := OpenJSONL(context.Background(), p, hdr("f"), WithFile(func(f File) File { ff = &faultFile{File: f, mode: mode}; return ff }))
			if err != nil {
				t.Fatal(err)
			}
			s, _, _ := Resume(context.Background(), st, clock())
			sc := scenario()
			for _, x := range sc[:5] {
				if _, err := s.Append(context.Background(), event.Raw{Type: x.ty, Data: raw(x.data)}, x.intent.Value()); err != nil {
					t.Fatal(err)
				}
			}
			acked := s.Events()
			ff.armed = true
			_, err = s.Append(context.Background(), event.Raw{Type: sc[5].ty, Data: raw(sc[5].data)}, sc[5].intent.Value())
			if !errors.Is(err, event.CodePersistIO) || ff.failures == 0 {
				t.Fatalf("append under %s: %v", mode, err)
			}
			if mode == "enospc" && !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("the cause is lost: %v", err)
			}
			if s.Len() != len(acked) {
				t.Fatalf("the failed append changed the session")
			}
			ff.armed = false
			_, err = s.Append(context.Background(), event.Raw{Type: sc[5].ty, Data: raw(sc[5].data)}, sc[5].intent.Value())
			if mode == "sync+truncate" {
				if !errors.Is(err, event.CodePersistClosed) {
					t.Fatalf("a store that could not roll back must refuse appends: %v", err)
				}
			} else if err != nil {
				t.Fatalf("append after the fault: %v", err)
			} else {
				acked = s.Events()
			}
			st.crash()
			re, err := OpenJSONL(context.Background(), p, hdr("f"))
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			defer re.Close(context.Background())
			loaded := re.Events()
			if len(loaded) < len(acked) || !sameJSON(loaded[:len(acked)], acked) || len(loaded) > len(acked)+1 {
				t.Fatalf("reloaded %d events, acknowledged %d", len(loaded), len(acked))
			}
			if _, _, err := Resume(context.Background(), re, clock()); err != nil {
				t.Fatalf("resume: %v", err)
			}
		})
	}
}

// nextKill steps through kill points (byte offsets, transaction
// boundaries): every one, or in -short mode (the mutation tool's runs,
// scripts/gremlins.sh) every fifth and the last. CI runs every one.
func nextKill(k, last int) int {
	if !testing.Short() || k == last {
		return k + 1
	}
	return min(k+5, last)
}

// nextOffset is nextKill over byte offsets that never skips a line's end.
func nextOffset(k int64, ends []int64, last int64) int64 {
	next := int64(nextKill(int(k), int(last)))
	for _, e := range ends {
		if e > k && e < next {
			return e
		}
	}
	return next
}
