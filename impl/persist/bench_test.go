package persist

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/internal/traffic"
)

// BenchmarkAppend measures durable appends of realistic traffic for each
// backend under each sync policy. Compare with BenchmarkAppendFloor.
func BenchmarkAppend(b *testing.B) {
	for _, backend := range []string{"jsonl", "sqlite"} {
		for _, policy := range []SyncPolicy{SyncEveryAppend, SyncOnTurnEnd, SyncNever} {
			b.Run(backend+"/"+policy.String(), func(b *testing.B) {
				b.ReportAllocs()
				dir := b.TempDir()
				var st Store
				var err error
				if backend == "jsonl" {
					st, err = OpenJSONL(filepath.Join(dir, "a.jsonl"), hdr("a"), WithSync(policy))
				} else {
					st, err = OpenSQLite(filepath.Join(dir, "a.db"), hdr("a"), WithSQLiteSync(policy))
				}
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				s, _, err := Resume(st)
				if err != nil {
					b.Fatal(err)
				}
				g := traffic.New(s)
				b.ResetTimer()
				if err := g.Append(b.N); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
			})
		}
	}
}

// BenchmarkAppendFloor is the raw floor of appends: for JSONL, marshalled
// lines written with one write each and no sync; for SQLite, plain INSERTs
// of the same rows into the same table in one transaction.
func BenchmarkAppendFloor(b *testing.B) {
	events := logOfSize(b, 100_000)
	b.Run("jsonl/raw-writes", func(b *testing.B) {
		b.ReportAllocs()
		f, _ := os.Create(filepath.Join(b.TempDir(), "raw.jsonl"))
		defer f.Close()
		var buf []byte
		for i := 0; i < b.N; i++ {
			buf, _ = events[i%len(events)].AppendJSON(buf[:0])
			buf = append(buf, '\n')
			f.Write(buf)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	})
	b.Run("sqlite/one-transaction", func(b *testing.B) {
		b.ReportAllocs()
		st, _ := OpenSQLite(filepath.Join(b.TempDir(), "raw.db"), hdr("a"))
		defer st.Close()
		tx, _ := st.db.Begin()
		ins, _ := tx.Prepare(`INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op) VALUES (?, ?, ?, ?, ?, ?, ?)`)
		for i := 0; i < b.N; i++ {
			e := events[i%len(events)]
			ins.Exec("a", i, string(e.Type), e.Time, string(e.Data), nil, nil)
		}
		tx.Commit()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	})
}

var (
	filesMu sync.Mutex
	files   = map[string]string{}
)

// logOfSize returns a valid log of n events of realistic traffic.
func logOfSize(b *testing.B, n int) []event.Event {
	l, err := traffic.Log(n)
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// storeOfSize writes a log of n events to a file of the backend, once per
// process, and returns its path.
func storeOfSize(b *testing.B, backend string, n int) string {
	events := logOfSize(b, n)
	filesMu.Lock()
	defer filesMu.Unlock()
	key := fmt.Sprint(backend, n)
	if p, ok := files[key]; ok {
		return p
	}
	dir, _ := os.MkdirTemp("", "surface-bench")
	var st Store
	var err error
	if backend == "jsonl" {
		st, err = OpenJSONL(filepath.Join(dir, "r.jsonl"), hdr("r"), WithSync(SyncNever))
	} else {
		st, err = OpenSQLite(filepath.Join(dir, "r.db"), hdr("r"), WithSQLiteSync(SyncNever))
	}
	if err != nil {
		b.Fatal(err)
	}
	if sq, ok := st.(*SQLite); ok {
		tx, _ := sq.db.Begin()
		ins, _ := tx.Prepare(`INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op) VALUES (?, ?, ?, ?, ?, ?, ?)`)
		for _, e := range events {
			src, op := markerColumns(&e)
			ins.Exec("r", e.Seq, string(e.Type), e.Time, string(e.Data), src, op)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	} else {
		for _, e := range events {
			if err := st.Append(e); err != nil {
				b.Fatal(err)
			}
		}
	}
	st.Close()
	files[key] = st.(interface{ Path() string }).Path()
	return files[key]
}

// Path is the database's path.
func (s *SQLite) Path() string { return s.path }

var sizes = []int{100_000, 1_000_000}

// BenchmarkResume measures opening a store and resuming its session (every
// rule checked, surface built) for 100k and 1M events, beside the raw
// floor of the same run: plain encoding/json decode of the same JSONL
// file, and a plain SELECT of the same rows.
func BenchmarkResume(b *testing.B) {
	for _, size := range sizes {
		for _, backend := range []string{"jsonl", "sqlite"} {
			path := storeOfSize(b, backend, size)
			n := len(logOfSize(b, size)) // the log of n events plus the closers of its last turn
			b.Run(fmt.Sprintf("%s/%d/resume", backend, size), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					var st Store
					var err error
					if backend == "jsonl" {
						st, err = OpenJSONL(path, hdr("r"))
					} else {
						st, err = OpenSQLite(path, hdr("r"))
					}
					if err != nil {
						b.Fatal(err)
					}
					s, _, err := Resume(st)
					if err != nil || s.Len() != n {
						b.Fatal(err)
					}
					_ = s.Messages()
					st.Close()
				}
			})
			b.Run(fmt.Sprintf("%s/%d/floor", backend, size), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if backend == "jsonl" {
						rawDecode(b, path, n)
					} else {
						rawSelect(b, path, n)
					}
				}
			})
		}
	}
}

type rawEvent struct {
	Type            string          `json:"type"`
	Seq             int64           `json:"seq"`
	Time            int64           `json:"time"`
	Data            json.RawMessage `json:"data"`
	SourceEventSeqs []int64         `json:"sourceEventSeqs"`
	SurfaceOp       json.RawMessage `json:"surfaceOp"`
}

func rawDecode(b *testing.B, path string, n int) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	r.ReadSlice('\n') // header
	count := 0
	for {
		line, err := r.ReadSlice('\n')
		if len(line) == 0 {
			break
		}
		var e rawEvent
		if json.Unmarshal(line, &e) != nil {
			b.Fatal("bad line")
		}
		count++
		if err != nil {
			break
		}
	}
	if count != n {
		b.Fatalf("decoded %d", count)
	}
}

func rawSelect(b *testing.B, path string, n int) {
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT seq, type, time, data, source_event_seqs, surface_op FROM events WHERE session_id = ? ORDER BY seq`, "r")
	if err != nil {
		b.Fatal(err)
	}
	count := 0
	for rows.Next() {
		var seq, t int64
		var typ, data string
		var src, op sql.NullString
		rows.Scan(&seq, &typ, &t, &data, &src, &op)
		count++
	}
	rows.Close()
	if count != n {
		b.Fatalf("selected %d", count)
	}
}
