// Package pgtest gives tests the PostgreSQL server they run against: the
// URL in SURFACE_PG_URL (scripts/pg.sh starts a throwaway cluster and
// exports it), and schema names of their own, so that runs never see each
// other's tables.
package pgtest

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// URL returns SURFACE_PG_URL. Without it the test is skipped, except under
// CI=true, where a missing server fails it (.ci/run starts one).
func URL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("SURFACE_PG_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but SURFACE_PG_URL is not set: .ci/run starts a Postgres server for these tests")
		}
		t.Skip("no SURFACE_PG_URL: start one with scripts/pg.sh")
	}
	return url
}

// Schema returns a schema name no other run uses: name, the process id
// and the time.
func Schema(name string) string {
	return fmt.Sprintf("%s_%d_%d", name, os.Getpid(), time.Now().UnixNano())
}
