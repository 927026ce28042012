package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/inflate"
)

// docFields is what a listing reads from a run's stored document: its conditions (nil for a
// run recorded without them) and a capacity search's answer.
type docFields struct {
	Conditions *conditions.Record `json:"conditions"`
	Capacity   *struct {
		Answer float64 `json:"answer"`
	} `json:"capacity"`
}

// readDoc reads the fields a listing needs from the stored document of the run with id.
func (d *DB) readDoc(ctx context.Context, id int64) (docFields, error) {
	var doc docFields
	var blob []byte
	if err := d.db.QueryRowContext(ctx, d.sql("SELECT doc FROM runs WHERE id = ?"), id).Scan(&blob); err != nil {
		return doc, d.wrap("reading conditions from", err)
	}
	b, err := inflate.Gzip(blob, maxDocBytes)
	if err == nil {
		err = json.Unmarshal(b, &doc)
	}
	if err != nil {
		return doc, fmt.Errorf("run #%d in %s: conditions: %w", id, d.path, err)
	}
	return doc, nil
}

// matchesConditions says whether rec matches every conditions term of f.
func (f Filter) matchesConditions(rec *conditions.Record) bool {
	for k, v := range f.Conditions {
		if !rec.Match(k, v) {
			return false
		}
	}
	return true
}

// withConditions fills the entries' conditions (oldest first) and keeps those f's
// conditions terms select, the newest f.Limit of them when set.
func (d *DB) withConditions(ctx context.Context, f Filter, entries []Entry) ([]Entry, error) {
	var out []Entry
	for _, e := range entries {
		doc, err := d.readDoc(ctx, e.ID)
		if err != nil {
			return nil, err
		}
		rec := doc.Conditions
		e.Conditions = rec
		if doc.Capacity != nil {
			e.Answer = doc.Capacity.Answer
		}
		if f.matchesConditions(rec) {
			out = append(out, e)
		}
	}
	if f.Limit > 0 && len(out) > f.Limit {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
		out = out[len(out)-f.Limit:]
	}
	return out, nil
}

// AddCondition adds a conditions term "KEY:VALUE" (or "KEY=VALUE", as --condition takes
// it) to f, refusing an unknown key.
func (f *Filter) AddCondition(term string) error {
	k, v, ok := strings.Cut(term, ":")
	if !ok {
		k, v, ok = strings.Cut(term, "=")
	}
	if !ok || k == "" {
		return fmt.Errorf("want cond=KEY:VALUE, e.g. cond=cpu:xeon (keys: %s)", strings.Join(conditions.Keys, ", "))
	}
	if err := conditions.CheckKey(k); err != nil {
		return err
	}
	if f.Conditions == nil {
		f.Conditions = map[string]string{}
	}
	f.Conditions[k] = v
	return nil
}
