package released_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/surfacelog/surface/impl/released"
	"github.com/surfacelog/surface/impl/released/samples"
)

// TestSamplesAgree (REL-1, REL-5): the sample session written per the
// facts in every format (plain JSONL, .jsonl.zstd of four frames, SQLite
// 14, 15 and 17 read while the events are still in the write-ahead log)
// loads with every packed kind expanded, the same surface and byte for
// byte the same messages.
func TestSamplesAgree(t *testing.T) {
	var want *released.Session
	check := func(name string, l *released.Log, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s, err := released.Check(l)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(s.Events) != samples.Events || l.Header.ID != "s1" || l.Header.Cwd == nil || *l.Header.Cwd != "/w" {
			t.Fatalf("%s: %d events, header %+v", name, len(s.Events), l.Header)
		}
		if want == nil {
			want = s
			if len(s.Surface) != 3 || s.Surface[0] != 1 || s.Surface[1] != 13 || s.Surface[2] != 16 || len(s.Messages) != 3 {
				t.Fatalf("%s: surface %v, %d messages", name, s.Surface, len(s.Messages))
			}
			return
		}
		// Every event, not only the messages: a packed chunk row of
		// SQLite expanded as JSONL's is.
		for i := range want.Events {
			a, b := want.Events[i], s.Events[i]
			if a.Ignorable && name == "schema 14" {
				continue // 14 has no ignorable column: its sample holds a known type there
			}
			if a.Type != b.Type || a.Seq != b.Seq || a.Time != b.Time || !bytes.Equal(a.Data, b.Data) || a.Op != b.Op {
				t.Fatalf("%s: event %d is %s %s, want %s %s", name, i, b.Type, b.Data, a.Type, a.Data)
			}
		}
		for i := range want.Messages {
			if !bytes.Equal(want.Messages[i], s.Messages[i]) {
				t.Fatalf("%s: message %d is %s, want %s", name, i, s.Messages[i], want.Messages[i])
			}
		}
	}
	l, err := released.Read(samples.JSONL(false))
	check("plain", l, err)
	l, err = released.Read(samples.JSONL(true))
	check("zstd", l, err)
	if l.Frames != 4 || !l.Compressed {
		t.Fatalf("zstd: %d frames", l.Frames)
	}
	for _, v := range released.SchemaVersions {
		path := filepath.Join(t.TempDir(), "sessions.db")
		db, err := samples.SQLite(path, v)
		if err != nil {
			t.Fatal(err)
		}
		if v == 17 { // the sample exercises what 17 changed
			var data, sources string
			var packed int
			db.QueryRow(`SELECT typeof(data), typeof(source_event_seqs) FROM events WHERE seq = 15`).Scan(&data, &sources)
			db.QueryRow(`SELECT count(*) FROM events WHERE ignorable = 0`).Scan(&packed)
			if data != "blob" || sources != "blob" || packed != 3 {
				t.Fatalf("schema 17 sample: data %s, sources %s, %d packed rows", data, sources, packed)
			}
		}
		l, err := released.ReadSQLite(context.Background(), path, "s1")
		check("schema "+string(rune('0'+v/10))+string(rune('0'+v%10)), l, err)
		db.Close()
	}
}
