package result

import (
	"encoding/json"
	"strings"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/sweep"
)

// v1Sweep is the sweep of a version 1 run.json: the plan's fields inline and one median
// point per level; the levels are recomputed from the steps on upgrade.
type v1Sweep struct {
	Levels    []int             `json:"levels"`
	Rates     []float64         `json:"rates"`
	Warmup    measure.Duration  `json:"warmup"`
	Count     int               `json:"count"`
	Objective sweep.Objective   `json:"objective"`
	Rules     sweep.Rules       `json:"rules"`
	Stop      *sweep.Stop       `json:"stop"`
	VsNative  *sweep.Comparison `json:"vs_native"`
}

// v1Capacity is the capacity record of a version 1 run.json: probes with met and misses.
type v1Capacity struct {
	Search sweep.Search `json:"search"`
	Probes []struct {
		Rate     float64  `json:"rate"`
		Achieved float64  `json:"achieved_rate"`
		Met      bool     `json:"met"`
		Misses   []string `json:"misses"`
		Step     int      `json:"step"`
	} `json:"probes"`
	Answer float64 `json:"answer"`
	Limit  float64 `json:"limit"`
}

// upgrade makes a version 1 capacity record a sweep.Capacity (no probe of version 1 was
// confirmed: each is a verdict of its own).
func (c *v1Capacity) upgrade(obj sweep.Objective) *sweep.Capacity {
	out := &sweep.Capacity{Search: c.Search, Objective: obj, Answer: c.Answer, Limit: c.Limit}
	for _, p := range c.Probes {
		q := sweep.Probe{Rate: p.Rate, Achieved: p.Achieved, Step: p.Step, Verdict: sweep.VerdictMet, Reason: "met the objective (version 1 record)"}
		if !p.Met {
			q.Verdict, q.Reason = sweep.VerdictFailed, strings.Join(p.Misses, "; ")
		}
		out.Probes = append(out.Probes, q)
	}
	return out
}

// decodeV1 reads a version 1 document whose sweep the current layout cannot hold and
// upgrades it; false when data is not such a document. Steps, when not nil, are the
// document's, read already (data holds everything else).
func decodeV1(data []byte, steps []*measure.Step) (*Run, bool) {
	var probe struct {
		Version int `json:"version"`
	}
	if json.Unmarshal(data, &probe) != nil || probe.Version != 1 {
		return nil, false
	}
	type plain Run // without methods, so the fields below shadow Run's
	var doc struct {
		plain
		Sweep    *v1Sweep        `json:"sweep"`
		Capacity *v1Capacity     `json:"capacity"`
		Native   json.RawMessage `json:"native"`
	}
	if steps != nil {
		doc.Steps = steps
	}
	if json.Unmarshal(data, &doc) != nil {
		return nil, false
	}
	r := Run(doc.plain)
	r.Sweep, r.Native, r.Capacity = nil, nil, nil
	if s := doc.Sweep; s != nil {
		plan := sweep.Plan{Levels: s.Levels, Rates: s.Rates, Warmup: s.Warmup, Count: s.Count}
		r.Sweep = sweep.NewRecord(plan, s.Objective, s.Rules)
		r.Sweep.Stop, r.Sweep.VsNative = s.Stop, s.VsNative
		r.Sweep.Analyze(r.Steps)
	}
	if c := doc.Capacity; c != nil {
		var obj sweep.Objective
		if r.Sweep != nil {
			obj = r.Sweep.Objective
		}
		r.Capacity = c.upgrade(obj)
	}
	if len(doc.Native) > 0 && string(doc.Native) != "null" {
		n, ok := decodeV1(doc.Native, nil)
		if !ok {
			var plainNative Run
			if json.Unmarshal(doc.Native, &plainNative) != nil {
				return nil, false
			}
			n = &plainNative
		}
		r.Native = n
	}
	return &r, true
}
