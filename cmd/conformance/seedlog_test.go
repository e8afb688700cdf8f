package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surfacelog/surface/conformance"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/session"
)

// TestValidateReadsAsSeed: validate checks a JSONL file with the events
// its decoder left (session.SeedLog, one scan per event); its verdict is
// the one session.Seed gives over the same events, error code and index,
// on every seed step of the conformance vectors (valid logs and logs
// broken in every way a vector breaks them, data, envelopes and surface
// rules among them), beside their plain and strict checks.
func TestValidateReadsAsSeed(t *testing.T) {
	vectors, err := conformance.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tried, broken := 0, 0
	for _, v := range vectors {
		for i, st := range v.Steps {
			if st.Op != "seed" || st.Lines == nil {
				continue
			}
			var b strings.Builder
			b.WriteString(`{"type":"session","version":0,"id":"v","createdAt":1}` + "\n")
			for _, l := range *st.Lines {
				b.WriteString(l + "\n")
			}
			path := filepath.Join(dir, strings.ReplaceAll(v.ID, "/", "_")+"-"+string(rune('a'+i%26))+".jsonl")
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			// The verdict of the straightforward path.
			want := "OK"
			h, events, _, derr := persist.DecodeJSONL(strings.NewReader(b.String()), path, int64(b.Len()))
			if derr == nil {
				derr = persist.CheckSeedLength(h, len(events))
			}
			if derr == nil {
				_, derr = session.Seed(events)
			}
			if derr != nil {
				want = "INVALID " + string(event.CodeOf(derr))
				broken++
			}
			var out bytes.Buffer
			validateCmd([]string{"--progress", "never", path}, &out, &bytes.Buffer{})
			got := out.String()
			if !strings.Contains(got, want) {
				t.Fatalf("%s step %d: validate says %q, Seed says %s (%v)", v.ID, i, got, want, derr)
			}
			if derr != nil {
				if ee, ok := derr.(*event.Error); ok && !strings.Contains(got, ee.Error()) {
					t.Fatalf("%s step %d: validate says %q, Seed says %q", v.ID, i, got, ee.Error())
				}
			}
			tried++
		}
	}
	if tried < 100 || broken < 30 {
		t.Fatalf("only %d seed steps tried (%d broken)", tried, broken)
	}
	t.Logf("%d seed steps, %d of them broken", tried, broken)
}
