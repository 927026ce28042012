// Package storetest gives tests the history databases to run on: a SQLite file always, and
// a fresh schema of the PostgreSQL at APIPERF_TEST_DATABASE_URL, which .ci/run starts and
// sets (a developer's machine without one tests SQLite alone, and says so).
package storetest

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

// EnvURL names the environment variable holding the test PostgreSQL's URL.
const EnvURL = "APIPERF_TEST_DATABASE_URL"

// Backends returns, by name ("sqlite", "postgres"), functions that make a new empty history
// database for one test and return its --db value.
func Backends(t *testing.T) map[string]func(t *testing.T) string {
	t.Helper()
	b := map[string]func(t *testing.T) string{"sqlite": func(t *testing.T) string {
		return filepath.Join(t.TempDir(), "sub", "history.db")
	}}
	if u := os.Getenv(EnvURL); u != "" {
		b["postgres"] = func(t *testing.T) string { return PostgresSchema(t, u) }
	} else {
		t.Logf("%s is not set: PostgreSQL not tested (.ci/run starts one and sets it)", EnvURL)
	}
	return b
}

// PostgresSchema makes a schema of its own in the database at base for one test (dropped
// after it) and returns base's URL with that schema as the search path.
func PostgresSchema(t *testing.T, base string) string {
	t.Helper()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	schema := fmt.Sprintf("t%d_%d", os.Getpid(), time.Now().UnixNano())
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("creating a schema in the test PostgreSQL (%s): %v", EnvURL, err)
	}
	t.Cleanup(func() {
		if a, err := sql.Open("pgx", base); err == nil {
			a.Exec("DROP SCHEMA " + schema + " CASCADE")
			a.Close()
		}
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}
