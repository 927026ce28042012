package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
)

// Recording is a run in the rows the history stores, made without opening the database:
// what Add inserts. It round-trips through JSON, so that a short-lived process can insert
// it (`apiperf history record`) and the load process never runs SQLite.
type Recording struct {
	Key     string            `json:"key"`
	Kind    string            `json:"kind"`
	Name    string            `json:"name"`
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Host    string            `json:"host"`
	StartNS int64             `json:"start_ns"`
	EndNS   int64             `json:"end_ns"`
	Source  string            `json:"source"`           // the run.json it came from, if any
	Spec    string            `json:"spec"`             // scenario and load config as JSON
	Doc     []byte            `json:"doc"`              // the whole run.json, gzipped
	Labels  map[string]string `json:"labels,omitempty"` // --label and git labels
	Steps   []StepRow         `json:"steps"`
	Levels  []LevelRow        `json:"levels"`
}

// StepRow is one measured step as the steps table holds it.
type StepRow struct {
	Idx         int     `json:"idx"`
	Label       string  `json:"label"`
	Rep         int     `json:"rep"`
	Concurrency int     `json:"concurrency"`
	QPS         float64 `json:"qps"`
	MeanMS      float64 `json:"mean_ms"`
	P50MS       float64 `json:"p50_ms"`
	P90MS       float64 `json:"p90_ms"`
	P99MS       float64 `json:"p99_ms"`
	SuccessPct  float64 `json:"success_pct"`
	Attempts    int64   `json:"attempts"`
	Requests    int64   `json:"requests"`
	Latency     string  `json:"latency"` // HdrHistogram interchange encoding
}

// LevelRow is one level as every report of the run shows it (sweep.Reduce).
type LevelRow struct {
	Idx        int     `json:"idx"`
	Label      string  `json:"label"`
	QPS        float64 `json:"qps"`
	P99MS      float64 `json:"p99_ms"`
	SuccessPct float64 `json:"success_pct"`
	Level      string  `json:"level"` // the whole sweep.Level as JSON
}

// NewRecording turns r into the rows the history stores; source names the run.json it was
// read from ("" if none).
func NewRecording(r *result.Run, source string) (*Recording, error) {
	doc, err := r.Encode()
	if err != nil {
		return nil, fmt.Errorf("encoding run: %w", err)
	}
	// BestSpeed: the default level's hash chains are about 700 KB of memory touched for a
	// document of a few KB, the largest part of recording a run; BestSpeed's are a fifth.
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed) // the level is valid
	zw.Write(doc)
	zw.Close()
	spec, err := specJSON(r)
	if err != nil {
		return nil, err
	}
	rec := &Recording{
		Key: Key(r), Kind: r.Kind, Name: r.Name, URL: r.Scenario.URL, Method: r.Scenario.MethodOrDefault(),
		Host: r.Host, StartNS: r.Start.UnixNano(), EndNS: r.End.UnixNano(),
		Source: source, Spec: spec, Doc: gz.Bytes(), Labels: r.Labels,
	}
	for i, s := range r.Steps {
		if s == nil {
			continue
		}
		row, err := stepRow(i, s)
		if err != nil {
			return nil, err
		}
		rec.Steps = append(rec.Steps, row)
	}
	if rec.Levels, err = levelRows(r); err != nil {
		return nil, err
	}
	return rec, nil
}

func stepRow(i int, s *measure.Step) (StepRow, error) {
	lat := s.Latency
	if lat == nil {
		lat = measure.NewHistogram()
	}
	enc, err := lat.MarshalJSON()
	if err != nil {
		return StepRow{}, fmt.Errorf("encoding step %s: %w", s.Label, err)
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	return StepRow{Idx: i, Label: s.Label, Rep: s.Rep, Concurrency: s.Concurrency, QPS: s.QPS(),
		MeanMS: ms(lat.Mean()), P50MS: ms(lat.Percentile(50)), P90MS: ms(lat.Percentile(90)), P99MS: ms(lat.Percentile(99)),
		SuccessPct: s.SuccessRate(), Attempts: s.Attempts, Requests: s.Requests, Latency: strings.Trim(string(enc), `"`)}, nil
}

// levelRows are the levels of r as every report of it shows them.
func levelRows(r *result.Run) ([]LevelRow, error) {
	var rows []LevelRow
	for i, l := range r.Levels().Levels {
		b, err := json.Marshal(l)
		if err != nil {
			return nil, fmt.Errorf("encoding level %s: %w", l.Label, err)
		}
		rows = append(rows, LevelRow{Idx: i, Label: l.Label, QPS: l.QPS, P99MS: float64(l.P99) / 1e6, SuccessPct: l.Success, Level: string(b)})
	}
	return rows, nil
}

// Record adds r to the history; source names the run.json it was read from ("" if none).
// It returns the run's id and whether it was new (false: it was already recorded).
func (d *DB) Record(ctx context.Context, r *result.Run, source string) (id int64, added bool, err error) {
	rec, err := NewRecording(r, source)
	if err != nil {
		return 0, false, err
	}
	return d.Add(ctx, rec)
}

// Add inserts rec into the history and returns the run's id and whether it was new (false:
// a run with its key was already recorded, and nothing changed).
func (d *DB) Add(ctx context.Context, rec *Recording) (id int64, added bool, err error) {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, false, d.wrap("recording run in", err)
	}
	defer tx.Rollback()
	// A run already recorded (by this process or a concurrent one) adds nothing: the
	// insert does nothing on its key, and the stored run's id is returned.
	err = tx.QueryRowContext(ctx, d.sql(`INSERT INTO runs (key, kind, name, url, method, host, start_ns, end_ns, source, spec, doc)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING RETURNING id`),
		rec.Key, rec.Kind, rec.Name, rec.URL, rec.Method, rec.Host, rec.StartNS, rec.EndNS, rec.Source, rec.Spec, rec.Doc).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		tx.Rollback()
		if err := d.db.QueryRowContext(ctx, d.sql("SELECT id FROM runs WHERE key = ?"), rec.Key).Scan(&id); err != nil {
			return 0, false, d.wrap("recording run in", err)
		}
		return id, false, nil
	}
	if err != nil {
		return 0, false, d.wrap("recording run in", err)
	}
	for k, v := range rec.Labels {
		if _, err := tx.ExecContext(ctx, d.sql("INSERT INTO labels (run_id, key, value) VALUES (?, ?, ?)"), id, k, v); err != nil {
			return 0, false, d.wrap("recording labels in", err)
		}
	}
	for _, s := range rec.Steps {
		if _, err := tx.ExecContext(ctx, d.sql(`INSERT INTO steps (run_id, idx, label, rep, concurrency, qps, mean_ms, p50_ms, p90_ms, p99_ms,
		success_pct, attempts, requests, latency) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			id, s.Idx, s.Label, s.Rep, s.Concurrency, s.QPS, s.MeanMS, s.P50MS, s.P90MS, s.P99MS,
			s.SuccessPct, s.Attempts, s.Requests, s.Latency); err != nil {
			return 0, false, d.wrap("recording steps in", err)
		}
	}
	if err := d.insertLevels(ctx, tx, id, rec.Levels); err != nil {
		return 0, false, d.wrap("recording levels in", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, false, d.wrap("recording run in", err)
	}
	return id, true, nil
}

// insertLevels stores the level rows of the run with id.
func (d *DB) insertLevels(ctx context.Context, tx *sql.Tx, id int64, rows []LevelRow) error {
	for _, l := range rows {
		if _, err := tx.ExecContext(ctx, d.sql(`INSERT INTO levels (run_id, idx, label, qps, p99_ms, success_pct, level) VALUES (?, ?, ?, ?, ?, ?, ?)`),
			id, l.Idx, l.Label, l.QPS, l.P99MS, l.SuccessPct, l.Level); err != nil {
			return err
		}
	}
	return nil
}
