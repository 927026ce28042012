package store

import (
	"context"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// TestRecordKeepsGeneratorLimit proves history keeps a level's generator limit: listed
// levels and the stored document both say the level was apiperf's ceiling.
func TestRecordKeepsGeneratorLimit(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t)
	r := testRun("http://127.0.0.1:1/a", time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), nil, 1)
	lim := measure.GeneratorLimit{Errno: "EMFILE", Resource: "open files", Connections: 90, Wanted: 200, Fix: "raise `ulimit -n`"}
	r.Steps[0].GeneratorLimit = &lim
	if _, _, err := db.Record(ctx, r, ""); err != nil {
		t.Fatal(err)
	}
	all, err := db.List(ctx, Filter{})
	if err != nil || len(all) != 1 || len(all[0].Levels) != 1 {
		t.Fatalf("List = %+v, %v; want one run of one level", all, err)
	}
	if g := all[0].Levels[0].GeneratorLimit; g == nil || *g != lim {
		t.Errorf("listed level's limit %+v, want %+v", g, lim)
	}
	back, err := db.Run(ctx, all[0].ID)
	if err != nil || back.Steps[0].GeneratorLimit == nil || *back.Steps[0].GeneratorLimit != lim {
		t.Errorf("Run = %v; step limit %+v, want %+v", err, back.Steps[0].GeneratorLimit, lim)
	}
}
