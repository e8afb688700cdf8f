package persist

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/internal/pgtest"
)

// TestPostgresKilledWriter: STORE-6, STORE-7, STORE-13. A writer process
// is killed (SIGKILL) after each acknowledged append; reopening loses no
// acknowledged event, and the repaired state equals the model's.
func TestPostgresKilledWriter(t *testing.T) {
	url := pgtest.URL(t)
	schema := pgtest.Schema("crash")
	n := len(scenario())
	lost := 0
	var all []event.Event
	for k := 0; k <= n; k++ {
		id := fmt.Sprintf("killed-%d", k)
		acked := killWriterAfter(t, k, "SURFACE_CRASH_WRITER=postgres", "SURFACE_CRASH_PATH="+id, "SURFACE_CRASH_SCHEMA="+schema)
		st := openPgEventually(t, url, id, schema)
		if all == nil {
			all = referenceEvents(t)
		}
		lost += checkRecovered(t, st, all, acked, n)
		st.Close(context.Background())
	}
	t.Logf("postgres: writer killed at %d transaction boundaries, events lost: %d", n+1, lost)
	if lost != 0 {
		t.Fatalf("%d acknowledged events lost", lost)
	}
}

// openPgEventually opens a session whose killed writer's connection the
// server may not have noticed yet (its lock goes with the connection).
func openPgEventually(t *testing.T, url, id, schema string) Store {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := OpenPostgres(context.Background(), url, hdr(id), WithPostgresSchema(schema))
		if err == nil {
			return st
		}
		if !isErr(err, event.CodePersistLocked, -1) || time.Now().After(deadline) {
			t.Fatalf("reopen %s: %v", id, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPostgresRace: STORE-4, STORE-13. Writer processes race for one
// session: one holds it, the others get persist.locked; the log stays
// contiguous. Two stores that bypass the lock (a second schema-level
// writer) cannot interleave: the primary key refuses the loser with
// persist.conflict.
func TestPostgresRace(t *testing.T) {
	url := pgtest.URL(t)
	schema := pgtest.Schema("race")
	var wg sync.WaitGroup
	outs := make([]string, 4)
	cmds := make([]*exec.Cmd, len(outs))
	for i := range outs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWriterProcess$")
		cmd.Env = append(os.Environ(), "SURFACE_CRASH_WRITER=postgres", "SURFACE_CRASH_PATH=raced", "SURFACE_CRASH_SCHEMA="+schema)
		out, _ := cmd.StdoutPipe()
		cmd.Start()
		cmds[i] = cmd
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var b strings.Builder
			r := bufio.NewScanner(out)
			for r.Scan() {
				b.WriteString(r.Text() + "\n")
				if r.Text() == "locked" || r.Text() == fmt.Sprintf("ack %d", len(scenario())-1) {
					break
				}
			}
			outs[i] = b.String()
		}(i)
	}
	// The winner keeps its lock (it waits to be killed) until every writer
	// has reported: a writer that starts late must still find it held.
	wg.Wait()
	for _, cmd := range cmds {
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	locked, wrote := 0, 0
	for _, o := range outs {
		switch {
		case strings.Contains(o, "locked"):
			locked++
		case strings.Contains(o, "ack 0"):
			wrote++
		}
	}
	if wrote != 1 || locked != len(outs)-1 {
		t.Fatalf("%d writers wrote and %d were locked out, want 1 and %d:\n%q", wrote, locked, len(outs)-1, outs)
	}
	st := openPgEventually(t, url, "raced", schema)
	defer st.Close(context.Background())
	events := st.Events()
	for i, e := range events {
		if e.Seq != int64(i) {
			t.Fatalf("the log is not contiguous at %d", i)
		}
	}
	if len(events) != len(scenario()) {
		t.Fatalf("%d events, want %d", len(events), len(scenario()))
	}
	// Bypassing the lock: insert the next seq behind the store's back;
	// the store's own append of that seq is then a conflict.
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `INSERT INTO `+pgx.Identifier{schema}.Sanitize()+`.events (session_id, seq, type, time, data) VALUES ('raced', $1, 'todo/write', 1, '{"todos":[]}')`, len(events)); err != nil {
		t.Fatal(err)
	}
	err = st.Append(context.Background(), event.Event{Type: event.TypeTodoWrite, Seq: int64(len(events)), Time: 2, Data: []byte(`{"todos":[]}`)})
	if !isErr(err, event.CodePersistConflict, int64(len(events))) {
		t.Fatalf("an append that lost the race: %v", err)
	}
}

// TestPostgresSchemaVersion: STORE-13. A schema of another version is
// refused; a schema without the tables is not a session store.
func TestPostgresSchemaVersion(t *testing.T) {
	url := pgtest.URL(t)
	schema := pgtest.Schema("version")
	st, err := OpenPostgres(context.Background(), url, hdr("v"), WithPostgresSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	st.Close(context.Background())
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	id := pgx.Identifier{schema}.Sanitize()
	for _, v := range []int{0, 2} {
		conn.Exec(context.Background(), `UPDATE `+id+`.schema_version SET version = $1`, v)
		if _, err := OpenPostgres(context.Background(), url, hdr("v"), WithPostgresSchema(schema)); !isErr(err, event.CodePersistSchemaVersion, -1) {
			t.Errorf("version %d: %v", v, err)
		}
	}
	other := pgtest.Schema("foreign")
	conn.Exec(context.Background(), `CREATE SCHEMA `+pgx.Identifier{other}.Sanitize()+`; CREATE TABLE `+pgx.Identifier{other}.Sanitize()+`.jobs (id INT)`)
	if _, err := OpenPostgres(context.Background(), url, hdr("v"), WithPostgresSchema(other)); !isErr(err, event.CodePersistNotASession, -1) {
		t.Errorf("a foreign schema: %v", err)
	}
}
