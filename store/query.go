package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sweep"
)

// Filter selects runs from the history. The zero value selects every run.
type Filter struct {
	ID     int64             `json:"id,omitempty"`     // one run, by the id history lists
	URL    string            `json:"url,omitempty"`    // exact target URL
	Kind   string            `json:"kind,omitempty"`   // run, sweep or capacity
	Labels map[string]string `json:"labels,omitempty"` // every one must match
	Since  time.Time         `json:"since,omitempty"`  // runs started at or after
	Until  time.Time         `json:"until,omitempty"`  // runs started before
	// Limit keeps the newest Limit runs; 0 keeps all.
	Limit int `json:"limit,omitempty"`
	// Conditions select runs by what they were measured on: key (conditions.Keys) to value;
	// every one must match (conditions.Record.Match).
	Conditions map[string]string `json:"conditions,omitempty"`
}

// Entry is one recorded run as listed: its identity, labels and levels.
type Entry struct {
	ID     int64             `json:"id"`
	Kind   string            `json:"kind"`
	Name   string            `json:"name,omitempty"`
	URL    string            `json:"url"`
	Method string            `json:"method"`
	Host   string            `json:"host,omitempty"`
	Start  time.Time         `json:"start"`
	End    time.Time         `json:"end"`
	Source string            `json:"source,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	// Levels are the run's levels as every report of it shows them (result.Run.Levels).
	Levels []sweep.Level `json:"levels"`
	// Conditions is what the run was measured on; nil unknown (store/conditions.go).
	Conditions *conditions.Record `json:"conditions,omitempty"`
	// HTTP2 says the run spoke HTTP/2: another line of inquiry than HTTP/1.1 to the same URL.
	HTTP2 bool `json:"http2,omitempty"`
	// Answer is a capacity search's answer (its highest rate meeting the objective; 0 when
	// none did), which the run stands for in lists and trends, not its last probe.
	Answer float64 `json:"answer,omitempty"`
}

// Headline is the level that stands for the run: a capacity search's answer (false when none
// met the objective), otherwise its last level (false when it has none).
func (e Entry) Headline() (sweep.Level, bool) {
	if e.Kind == result.KindCapacity {
		for _, l := range e.Levels {
			if e.Answer > 0 && l.Value == e.Answer {
				return l, true
			}
		}
		return sweep.Level{}, false
	}
	if n := len(e.Levels); n > 0 {
		return e.Levels[n-1], true
	}
	return sweep.Level{}, false
}

// Target names what the run measured, so that runs of another kind, method, URL or protocol
// are never one line of a trend: "run GET http://127.0.0.1:8080/x", "... (HTTP/2)".
func (e Entry) Target() string {
	t := e.Kind + " " + e.Method + " " + e.URL
	if e.HTTP2 {
		t += " (HTTP/2)"
	}
	return t
}

// ParseQuery reads a history query: a run id as `apiperf history` lists it (`10`, `#10` or
// `id=10`), or comma-separated terms `latest`, `label=KEY:VALUE`, `url=URL`, `kind=KIND`,
// `since=DATE`, `until=DATE` (DATE as 2006-01-02 or RFC 3339). `latest` sets Limit 1; the
// query "label=branch:main" selects runs on main, newest first.
func ParseQuery(q string) (Filter, error) {
	var f Filter
	if strings.TrimSpace(q) == "" {
		return f, errors.New("empty history query")
	}
	for _, term := range strings.Split(q, ",") {
		term = strings.TrimSpace(term)
		key, val, _ := strings.Cut(term, "=")
		var err error
		if id, ok := parseID(term); ok {
			f.ID = id
			continue
		}
		switch key {
		case "id":
			err = fmt.Errorf("%q is not a run id like 10", val)
		case "latest":
			f.Limit = 1
		case "label":
			k, v, ok := strings.Cut(val, ":")
			if !ok || k == "" {
				return f, fmt.Errorf("history query %q: want label=KEY:VALUE", term)
			}
			if f.Labels == nil {
				f.Labels = map[string]string{}
			}
			f.Labels[k] = v
		case "url":
			f.URL = val
		case "kind":
			f.Kind = val
		case "since":
			f.Since, err = ParseDate(val)
		case "until":
			f.Until, err = ParseDate(val)
		case "cond":
			err = f.AddCondition(val)
		default:
			return f, fmt.Errorf("history query: unknown term %q (want a run id, latest, label=KEY:VALUE, url=, kind=, since=, until=, cond=KEY:VALUE)", term)
		}
		if err != nil {
			return f, fmt.Errorf("history query %q: %w", term, err)
		}
	}
	return f, nil
}

// parseID reads a run id: "10", "#10" or "id=10".
func parseID(term string) (int64, bool) {
	term = strings.TrimPrefix(strings.TrimPrefix(term, "id="), "#")
	id, err := strconv.ParseInt(term, 10, 64)
	return id, err == nil && id > 0
}

// ParseDate reads a date (2006-01-02, in UTC) or an RFC 3339 time.
func ParseDate(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return t, fmt.Errorf("%q is not a date like 2026-01-31 or 2026-01-31T15:04:05Z", s)
	}
	return t, nil
}

// List returns the runs matching f, oldest first (the newest f.Limit when set).
func (d *DB) List(ctx context.Context, f Filter) ([]Entry, error) {
	var where []string
	var args []any
	if f.ID != 0 {
		where, args = append(where, "id = ?"), append(args, f.ID)
	}
	if f.URL != "" {
		where, args = append(where, "url = ?"), append(args, f.URL)
	}
	if f.Kind != "" {
		where, args = append(where, "kind = ?"), append(args, f.Kind)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "start_ns >= ?"), append(args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		where, args = append(where, "start_ns < ?"), append(args, f.Until.UnixNano())
	}
	keys := make([]string, 0, len(f.Labels))
	for k := range f.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		where = append(where, "id IN (SELECT run_id FROM labels WHERE key = ? AND value = ?)")
		args = append(args, k, f.Labels[k])
	}
	q := "SELECT id, kind, name, url, method, host, start_ns, end_ns, source, spec FROM runs"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY start_ns DESC, id DESC"
	if f.Limit > 0 && len(f.Conditions) == 0 { // conditions are matched after the query
		q += " LIMIT " + strconv.Itoa(f.Limit)
	}
	rows, err := d.db.QueryContext(ctx, d.sql(q), args...)
	if err != nil {
		return nil, d.wrap("listing runs in", err)
	}
	var out []Entry
	for rows.Next() {
		var e Entry
		var start, end int64
		var spec string
		if err := rows.Scan(&e.ID, &e.Kind, &e.Name, &e.URL, &e.Method, &e.Host, &start, &end, &e.Source, &spec); err != nil {
			rows.Close()
			return nil, d.wrap("listing runs in", err)
		}
		var sp struct {
			Load struct {
				HTTP2 bool `json:"http2"`
			} `json:"load"`
		}
		if json.Unmarshal([]byte(spec), &sp) == nil {
			e.HTTP2 = sp.Load.HTTP2
		}
		e.Start, e.End = time.Unix(0, start).UTC(), time.Unix(0, end).UTC()
		out = append(out, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, d.wrap("listing runs in", err)
	}
	for i := range out {
		if err := d.fill(ctx, &out[i]); err != nil {
			return nil, err
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return d.withConditions(ctx, f, out)
}

// fill reads an entry's labels and levels.
func (d *DB) fill(ctx context.Context, e *Entry) error {
	rows, err := d.db.QueryContext(ctx, d.sql("SELECT key, value FROM labels WHERE run_id = ?"), e.ID)
	if err != nil {
		return d.wrap("reading labels from", err)
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return d.wrap("reading labels from", err)
		}
		if e.Labels == nil {
			e.Labels = map[string]string{}
		}
		e.Labels[k] = v
	}
	rows.Close()
	rows, err = d.db.QueryContext(ctx, d.sql("SELECT level FROM levels WHERE run_id = ? ORDER BY idx"), e.ID)
	if err != nil {
		return d.wrap("reading levels from", err)
	}
	defer rows.Close()
	for rows.Next() {
		var js string
		if err := rows.Scan(&js); err != nil {
			return d.wrap("reading levels from", err)
		}
		var l sweep.Level
		if err := json.Unmarshal([]byte(js), &l); err != nil {
			return fmt.Errorf("run #%d in %s: level: %w", e.ID, d.path, err)
		}
		e.Levels = append(e.Levels, l)
	}
	return rows.Err()
}

// ImportStats counts what Import did.
type ImportStats struct {
	Found, Added int
	// Skipped lists the files that could not be read, each with its error.
	Skipped []string
}

// Import records every run.json under dir (walked recursively) that is not recorded yet.
// A file that cannot be read is skipped and listed, never fatal.
func (d *DB) Import(ctx context.Context, dir string) (ImportStats, error) {
	var st ImportStats
	err := filepath.WalkDir(dir, func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			st.Skipped = append(st.Skipped, fmt.Sprintf("%s: %v", path, err))
			return nil
		}
		if de.IsDir() || de.Name() != "run.json" {
			return ctx.Err()
		}
		st.Found++
		r, err := result.Load(path)
		if err != nil {
			st.Skipped = append(st.Skipped, err.Error())
			return nil
		}
		abs, _ := filepath.Abs(path)
		_, added, err := d.Record(ctx, r, abs)
		if err != nil {
			return err
		}
		if added {
			st.Added++
		}
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("importing %s: %w", dir, err)
	}
	return st, nil
}

func specJSON(r *result.Run) (string, error) {
	b, err := json.Marshal(struct {
		Scenario any `json:"scenario"`
		Load     any `json:"load"`
		Sweep    any `json:"sweep,omitempty"`
	}{r.Scenario, r.Load, r.Sweep})
	if err != nil {
		return "", fmt.Errorf("encoding run spec: %w", err)
	}
	return string(b), nil
}
