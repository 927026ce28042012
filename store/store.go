// Package store keeps the history of runs in an embedded SQLite database (pure Go), or in a
// PostgreSQL database that a team's runners share (postgres.go): every run's labels, spec,
// per-level summaries and histograms, for listing, trends and the CI gate's baselines. Both
// have one schema and one set of queries; the SQL dialect differs only in the table
// definitions, the placeholders and how the schema version is kept. run.json files stay the
// source of truth; Import rebuilds the database from them. Several processes may record at
// once (SQLite: WAL, immediate transactions; PostgreSQL: a unique run key).
package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite"

	"github.com/apiperf/apiperf/inflate"
	"github.com/apiperf/apiperf/result"
)

// DefaultPath is where the history database lives unless told otherwise: beside the run
// directories, relative to the working directory.
const DefaultPath = ".apiperf/history.db"

// schemaVersion is the database's user_version; a newer file is refused, an older one
// upgraded (version 2 added the levels table, filled from the stored run documents).
const schemaVersion = 2

// ErrDamaged marks a database file SQLite cannot read: run.json files are not affected and
// `apiperf history import DIR` rebuilds the history into a new file.
var ErrDamaged = errors.New("history database is damaged")

// SQLite primary result codes that mean the file is not a usable database.
const (
	sqliteBusy    = 5
	sqliteCorrupt = 11
	sqliteNotADB  = 26
)

// DB is an open history database. It is safe for concurrent use, also by several processes.
type DB struct {
	db   *sql.DB
	path string // the file, or the PostgreSQL URL without its password: safe to print
	pg   bool   // PostgreSQL: $n placeholders
}

const schema = `
CREATE TABLE IF NOT EXISTS runs (
	id       INTEGER PRIMARY KEY,
	key      TEXT NOT NULL UNIQUE, -- identity of the run: start, host, kind, URL, command
	kind     TEXT NOT NULL,
	name     TEXT NOT NULL,
	url      TEXT NOT NULL,
	method   TEXT NOT NULL,
	host     TEXT NOT NULL,
	start_ns INTEGER NOT NULL,
	end_ns   INTEGER NOT NULL,
	source   TEXT NOT NULL, -- the run.json it came from, if any
	spec     TEXT NOT NULL, -- scenario and load config as JSON
	doc      BLOB NOT NULL  -- the whole run.json, gzipped
);
CREATE INDEX IF NOT EXISTS runs_start ON runs(start_ns);
CREATE INDEX IF NOT EXISTS runs_url ON runs(url);
CREATE TABLE IF NOT EXISTS labels (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	key    TEXT NOT NULL,
	value  TEXT NOT NULL,
	PRIMARY KEY (run_id, key)
);
CREATE INDEX IF NOT EXISTS labels_kv ON labels(key, value);
CREATE TABLE IF NOT EXISTS steps (
	run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	idx         INTEGER NOT NULL,
	label       TEXT NOT NULL,
	rep         INTEGER NOT NULL,
	concurrency INTEGER NOT NULL,
	qps         REAL NOT NULL,
	mean_ms     REAL NOT NULL,
	p50_ms      REAL NOT NULL,
	p90_ms      REAL NOT NULL,
	p99_ms      REAL NOT NULL,
	success_pct REAL NOT NULL,
	attempts    INTEGER NOT NULL,
	requests    INTEGER NOT NULL,
	latency     TEXT NOT NULL, -- HdrHistogram interchange encoding
	PRIMARY KEY (run_id, idx)
);
CREATE TABLE IF NOT EXISTS levels (
	run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	idx         INTEGER NOT NULL,
	label       TEXT NOT NULL,
	qps         REAL NOT NULL, -- as every report shows it (sweep.Reduce)
	p99_ms      REAL NOT NULL,
	success_pct REAL NOT NULL,
	level       TEXT NOT NULL, -- the whole sweep.Level as JSON
	PRIMARY KEY (run_id, idx)
);
`

// Open opens (creating it and its directory if needed) the history database at path: a
// SQLite file, or a PostgreSQL database when path is a postgres:// or postgresql:// URL
// (IsPostgres). A file that is not a readable SQLite database gives an error wrapping
// ErrDamaged.
func Open(path string) (*DB, error) {
	if IsPostgres(path) {
		return openPostgres(path)
	}
	if dir := filepath.Dir(path); dir != "" {
		// Only the database's own directory is made (.apiperf by default), never its parents.
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("creating history directory: %w", err)
		}
	}
	dsn := "file:" + path + "?_txlock=immediate&_pragma=busy_timeout(15000)&_pragma=foreign_keys(1)&_pragma=synchronous(normal)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening history database %s: %w", path, err)
	}
	d := &DB{db: db, path: path}
	if err := d.init(); err != nil {
		db.Close()
		return nil, d.wrap("opening history database", err)
	}
	return d, nil
}

func (d *DB) init() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Switching to WAL takes the file's lock without waiting on busy_timeout: a writer that
	// holds it (another runner recording) makes it fail at once, so retry until the context's end.
	var mode string
	for {
		err := d.db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode)
		if err == nil {
			break
		}
		var se *sqlite.Error
		if !errors.As(err, &se) || se.Code()&0xff != sqliteBusy || ctx.Err() != nil {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
	var version int
	if err := d.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if version > schemaVersion {
		return fmt.Errorf("schema version %d is newer than this apiperf's %d", version, schemaVersion)
	}
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return err
	}
	if version == 1 {
		if err := d.fillLevels(ctx, tx); err != nil {
			return fmt.Errorf("upgrading to schema version %d: %w", schemaVersion, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// fillLevels adds the levels of every stored run that has none (a version 1 database).
func (d *DB) fillLevels(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, "SELECT id, doc FROM runs WHERE id NOT IN (SELECT run_id FROM levels)") // SQLite only
	if err != nil {
		return err
	}
	type stored struct {
		id  int64
		doc []byte
	}
	var runs []stored
	for rows.Next() {
		var s stored
		if err := rows.Scan(&s.id, &s.doc); err != nil {
			rows.Close()
			return err
		}
		runs = append(runs, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, s := range runs {
		r, err := decodeDoc(fmt.Sprintf("run #%d", s.id), s.doc)
		if err != nil {
			continue // unreadable documents keep no levels; Run reports them when asked
		}
		rows, err := levelRows(r)
		if err != nil {
			return err
		}
		if err := d.insertLevels(ctx, tx, s.id, rows); err != nil {
			return err
		}
	}
	return nil
}

// maxDocBytes bounds what a stored run document may expand to: a database shared by a team
// may hold a document written by anyone.
const maxDocBytes = 256 << 20

// decodeDoc reads a gzipped run document.
func decodeDoc(name string, blob []byte) (*result.Run, error) {
	doc, err := inflate.Gzip(blob, maxDocBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return result.Decode(name, doc)
}

// wrap adds context to err and marks a damaged file with ErrDamaged.
func (d *DB) wrap(doing string, err error) error {
	if d.pg {
		return fmt.Errorf("%s %s: %w", doing, d.path, redactErr(err))
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		if c := se.Code() & 0xff; c == sqliteCorrupt || c == sqliteNotADB {
			return damaged(doing, d.path, err)
		}
	}
	return fmt.Errorf("%s %s: %w", doing, d.path, err)
}

// damaged is the error for a file at path that is not a readable history database.
func damaged(doing, path string, cause error) error {
	return fmt.Errorf("%s %s: %w (%v); run.json files are untouched: move the file away and rebuild with `apiperf history import DIR`",
		doing, path, ErrDamaged, cause)
}

// Path is the database file's path, or the PostgreSQL URL without its password.
func (d *DB) Path() string { return d.path }

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

// Key is a run's identity in the history: the same run recorded twice (at its end, then
// again by an import of its run.json) is stored once. The two sides of an `ab` comparison
// are two runs, even of one URL.
func Key(r *result.Run) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s", r.Start.UTC().Format(time.RFC3339Nano), r.Host, r.Kind,
		r.Scenario.URL, strings.Join(r.Command, "\x00"))
	if r.AB != nil {
		fmt.Fprintf(h, "\x00ab %s", r.AB.Side) // the two sides of an A/A comparison of one URL are two runs
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// Run returns the whole run document recorded with id.
func (d *DB) Run(ctx context.Context, id int64) (*result.Run, error) {
	var blob []byte
	err := d.db.QueryRowContext(ctx, d.sql("SELECT doc FROM runs WHERE id = ?"), id).Scan(&blob)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("no run #%d in %s", id, d.path)
	}
	if err != nil {
		return nil, d.wrap("reading run from", err)
	}
	return decodeDoc(fmt.Sprintf("%s#%d", d.path, id), blob)
}

// sql returns query in the database's dialect: SQLite takes ? placeholders, PostgreSQL $1, $2...
func (d *DB) sql(query string) string {
	if !d.pg {
		return query
	}
	return postgresSQL(query)
}
