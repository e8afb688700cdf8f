package persist

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/surfacelog/surface/impl/event"
)

// TestQuarantineNames: the torn bytes go to the first free name of
// base, base.2, ... base.1000; a name that holds the same bytes is reused,
// one that holds others skipped; when all 1000 hold other bytes, the
// quarantine fails with persist.io and writes nothing.
func TestQuarantineNames(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	base := QuarantineName(path, 42)
	torn := []byte(`{"type":"x","se`)
	write := func(name, s string) {
		if err := os.WriteFile(name, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := quarantine(path, 42, torn)
	if err != nil || got != base {
		t.Fatalf("first quarantine: %q, %v", got, err)
	}
	if again, err := quarantine(path, 42, torn); err != nil || again != base {
		t.Fatalf("the same bytes again: %q, %v (want the name reused)", again, err)
	}
	write(base, "other")
	for n := 2; n < 1000; n++ {
		write(base+"."+strconv.Itoa(n), "other")
	}
	got, err = quarantine(path, 42, torn)
	if err != nil || got != base+".1000" {
		t.Fatalf("with 999 names taken: %q, %v; want %s.1000", got, err, base)
	}
	if b, _ := os.ReadFile(got); string(b) != string(torn) {
		t.Fatalf("%s holds %q", got, b)
	}
	write(got, "other")
	if got, err := quarantine(path, 42, torn); !isErrCode(err, event.CodePersistIO) || got != "" {
		t.Fatalf("with every name taken: %q, %v", got, err)
	}
	if _, err := os.Stat(base + ".1001"); err == nil {
		t.Fatal("a name past the last was written")
	}
}

func isErrCode(err error, code event.Code) bool { return event.CodeOf(err) == code }
