package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/internal/traffic"
)

// BenchmarkValidate compares `conformance validate` with the library's own
// Resume of the same JSONL file, in one run (STORE-12: validate must stay
// within 1.5x of Resume in time and memory). Run with
//
//	go test ./cmd/conformance -run '^$' -bench Validate -benchtime 3x
func BenchmarkValidate(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		events, err := traffic.Log(n)
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(b.TempDir(), "v.jsonl")
		st, err := persist.OpenJSONL(context.Background(), path, persist.Header{ID: "v"}, persist.WithSync(persist.SyncNever))
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range events {
			if err := st.Append(context.Background(), e); err != nil {
				b.Fatal(err)
			}
		}
		st.Close(context.Background())
		fi, _ := os.Stat(path)
		b.Run(fmt.Sprintf("%d/validate", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(fi.Size())
			for i := 0; i < b.N; i++ {
				validateOnce(b, path)
			}
		})
		// Interleaved: per operation a resume, then validate of the same
		// file; their ratio is STORE-12's figure (at most 1.5x).
		b.Run(fmt.Sprintf("%d/interleaved", n), func(b *testing.B) {
			var tr, tv time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				resumeOnce(b, path)
				t1 := time.Now()
				validateOnce(b, path)
				tv += time.Since(t1)
				tr += t1.Sub(t0)
			}
			b.ReportMetric(float64(tr.Nanoseconds())/float64(b.N), "resume-ns/op")
			b.ReportMetric(float64(tv.Nanoseconds())/float64(b.N), "validate-ns/op")
			b.ReportMetric(float64(tv)/float64(tr), "validate/resume")
		})
		b.Run(fmt.Sprintf("%d/resume", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(fi.Size())
			for i := 0; i < b.N; i++ {
				resumeOnce(b, path)
			}
		})
	}
}

// resumeOnce resumes the JSONL session at path and derives its messages,
// as an agent starting up would.
func resumeOnce(b *testing.B, path string) {
	st, err := persist.OpenJSONL(context.Background(), path, persist.Header{ID: "v"})
	if err != nil {
		b.Fatal(err)
	}
	s, _, err := persist.Resume(context.Background(), st)
	if err != nil {
		b.Fatal(err)
	}
	_ = s.Messages()
	s.Close(context.Background())
}

// validateOnce runs conformance validate on path, which must be valid.
func validateOnce(b *testing.B, path string) {
	if code := validateCmd([]string{"--progress", "never", path}, io.Discard, io.Discard); code != 0 {
		b.Fatalf("validate exited %d", code)
	}
}
