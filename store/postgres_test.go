package store

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		".apiperf/history.db":                         ".apiperf/history.db",
		"postgres://ci:s3cret@127.0.0.1:5432/h":       "postgres://ci:REDACTED@127.0.0.1:5432/h",
		"postgresql://127.0.0.1/h?password=s3cret":    "postgresql://127.0.0.1/h?password=REDACTED",
		"postgres://ci:s3cret@127.0.0.1:99999999/%zz": "postgres://ci:REDACTED@127.0.0.1:99999999/%zz",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q; want %q", in, got, want)
		}
	}
}

// A PostgreSQL that does not answer, or refuses the credentials, is one line naming the
// database without its password.
func TestPostgresRefused(t *testing.T) {
	urls := []string{"postgres://ci:s3cret@127.0.0.1:1/history?sslmode=disable&connect_timeout=5"}
	if base := os.Getenv("APIPERF_TEST_DATABASE_URL"); base != "" {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(u.User.Username(), "s3cret")
		urls = append(urls, u.String())
	}
	for _, dsn := range urls {
		_, err := Open(dsn)
		if err == nil {
			t.Errorf("Open(%s) succeeded; want an error", Redact(dsn))
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "s3cret") || strings.Contains(msg, "\n") || !strings.Contains(msg, ":REDACTED@127.0.0.1:") {
			t.Errorf("Open(%s): %q; want one line naming the database without its password", Redact(dsn), msg)
		}
	}
}

// A database whose schema a newer apiperf made is refused, not written into.
func TestPostgresNewerSchema(t *testing.T) {
	base := os.Getenv("APIPERF_TEST_DATABASE_URL")
	if base == "" {
		t.Skip("APIPERF_TEST_DATABASE_URL is not set (.ci/run starts a PostgreSQL and sets it)")
	}
	path := postgresSchemaURL(t, base)
	db, _ := openAt(t, path)
	if _, err := db.db.Exec("UPDATE apiperf_schema SET version = 99"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "schema version 99 is newer") {
		t.Errorf("Open of a newer schema: %v; want it refused", err)
	}
	var n int
	if err := db.db.QueryRowContext(context.Background(), "SELECT count(*) FROM apiperf_schema").Scan(&n); err != nil || n != 1 {
		t.Errorf("apiperf_schema has %d rows, %v; want 1", n, err)
	}
}

// The PostgreSQL tables are SQLite's schema with PostgreSQL's types: nothing of SQLite's left.
func TestPostgresSchemaTypes(t *testing.T) {
	for _, sqliteOnly := range []string{" REAL ", " BLOB ", "INTEGER PRIMARY KEY", "start_ns INTEGER", "run_id INTEGER", "run_id      INTEGER", "attempts    INTEGER"} {
		if strings.Contains(postgresSchema, sqliteOnly) {
			t.Errorf("the PostgreSQL schema still has %q:\n%s", sqliteOnly, postgresSchema)
		}
	}
	if strings.Count(postgresSchema, "CREATE TABLE") != strings.Count(schema, "CREATE TABLE") {
		t.Errorf("the PostgreSQL schema has other tables than SQLite's")
	}
}
