package persist

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/surfacelog/surface/internal/pgtest"
	"github.com/surfacelog/surface/internal/traffic"
)

// BenchmarkPostgresAppend: durable appends of realistic traffic through
// the Postgres store (one transaction each, synchronous_commit on, the
// server's default), beside the floor of the same run: the same rows
// INSERTed one statement (one transaction) at a time on a plain
// connection.
func BenchmarkPostgresAppend(b *testing.B) {
	url := pgtest.URL(b)
	schema := pgtest.Schema("bench")
	b.Run("store", func(b *testing.B) {
		st, err := OpenPostgres(context.Background(), url, hdr(fmt.Sprint("append-", b.N)), WithPostgresSchema(schema))
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close(context.Background())
		s, _, err := Resume(context.Background(), st)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		if err := traffic.New(s).Append(b.N); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	})
	b.Run("floor", func(b *testing.B) {
		events := logOfSize(b, 100_000)
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close(context.Background())
		id := pgx.Identifier{schema}.Sanitize()
		conn.Exec(context.Background(), `CREATE TABLE IF NOT EXISTS `+id+`.floor (session_id TEXT, seq BIGINT, type TEXT, time BIGINT, data TEXT, PRIMARY KEY (session_id, seq))`)
		sid := fmt.Sprint("floor-", b.N)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			e := events[i%len(events)]
			if _, err := conn.Exec(context.Background(), `INSERT INTO `+id+`.floor VALUES ($1, $2, $3, $4, $5)`, sid, i, string(e.Type), e.Time, string(e.Data)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	})
}

// BenchmarkPostgresResume: open and resume a session of 1e5 events (one
// streamed query, every rule checked, surface and messages built), beside
// the floor of the same run: a plain SELECT of the same rows into Go
// values.
func BenchmarkPostgresResume(b *testing.B) {
	url := pgtest.URL(b)
	schema := pgtest.Schema("resume")
	events := logOfSize(b, 100_000)
	st, err := OpenPostgres(context.Background(), url, hdr("r"), WithPostgresSchema(schema))
	if err != nil {
		b.Fatal(err)
	}
	conn, _ := pgx.Connect(context.Background(), url)
	defer conn.Close(context.Background())
	rows := make([][]any, len(events))
	for i, e := range events {
		src, op := markerColumns(&e)
		rows[i] = []any{"r", e.Seq, string(e.Type), e.Time, string(e.Data), src, op, false}
	}
	if _, err := conn.CopyFrom(context.Background(), pgx.Identifier{schema, "events"}, []string{"session_id", "seq", "type", "time", "data", "source_event_seqs", "surface_op", "ignorable"}, pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
	st.Close(context.Background())
	b.Run("resume", func(b *testing.B) {
		b.ReportAllocs()
		defer cpuTime(b)()
		for i := 0; i < b.N; i++ {
			st, err := OpenPostgres(context.Background(), url, hdr("r"), WithPostgresSchema(schema))
			if err != nil {
				b.Fatal(err)
			}
			s, _, err := Resume(context.Background(), st)
			if err != nil || s.Len() != len(events) {
				b.Fatalf("resume: %v", err)
			}
			_ = s.Messages()
			s.Close(context.Background())
		}
	})
	b.Run("floor", func(b *testing.B) {
		b.ReportAllocs()
		defer cpuTime(b)()
		type row struct {
			seq, time   int64
			typ, data   string
			sources, op *string
			ignorable   bool
		}
		for i := 0; i < b.N; i++ {
			rs, err := conn.Query(context.Background(), `SELECT seq, type, time, data, source_event_seqs, surface_op, ignorable FROM `+pgx.Identifier{schema}.Sanitize()+`.events WHERE session_id = 'r' ORDER BY seq`)
			if err != nil {
				b.Fatal(err)
			}
			var out []row
			for rs.Next() {
				var r row
				rs.Scan(&r.seq, &r.typ, &r.time, &r.data, &r.sources, &r.op, &r.ignorable)
				out = append(out, r)
			}
			rs.Close()
			if len(out) != len(events) {
				b.Fatalf("selected %d", len(out))
			}
		}
	})
}
