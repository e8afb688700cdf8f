package persist

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/internal/pgtest"
)

// TestHeaders: STORE-15. An empty id is refused by every store; a zero
// createdAt becomes now; a JSONL file opened with another session's id is
// refused and left as it is; errors name the store's path, not a
// temporary file's.
func TestHeaders(t *testing.T) {
	dir := t.TempDir()
	opens := map[string]func(Header) (Store, error){
		"jsonl": func(h Header) (Store, error) {
			return OpenJSONL(context.Background(), filepath.Join(dir, "h.jsonl"), h)
		},
	}
	if SQLiteAvailable {
		opens["sqlite"] = func(h Header) (Store, error) { return OpenSQLite(context.Background(), filepath.Join(dir, "h.db"), h) }
	}
	if os.Getenv("SURFACE_PG_URL") != "" || os.Getenv("CI") == "true" {
		url, schema := pgtest.URL(t), pgtest.Schema("headers")
		opens["postgres"] = func(h Header) (Store, error) {
			return OpenPostgres(context.Background(), url, h, WithPostgresSchema(schema))
		}
	}
	for name, open := range opens {
		if _, err := open(Header{}); !errors.Is(err, event.CodePersistHeaderInvalid) {
			t.Errorf("%s: an empty id: %v", name, err)
		}
		before := time.Now().UnixMilli()
		st, err := open(Header{ID: "h"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c := st.Header().CreatedAt; c < before || c > time.Now().UnixMilli() {
			t.Errorf("%s: createdAt %d is not now", name, c)
		}
		st.Close(context.Background())
	}
	path := filepath.Join(dir, "h.jsonl")
	before, _ := os.ReadFile(path)
	var wrong *event.Error
	if _, err := OpenJSONL(context.Background(), path, Header{ID: "other"}); !errors.Is(err, event.CodePersistWrongSession) || !errors.As(err, &wrong) || wrong.Seq != -1 {
		t.Fatalf("another session's file: %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("the file was changed")
	}
	// A directory that does not exist: the temporary file cannot be made.
	_, err := OpenJSONL(context.Background(), filepath.Join(dir, "missing", "s.jsonl"), Header{ID: "s"})
	if err == nil || strings.Contains(err.Error(), ".creating-") || !strings.Contains(err.Error(), filepath.Join(dir, "missing", "s.jsonl")) {
		t.Fatalf("create in a missing directory: %v", err)
	}
}
