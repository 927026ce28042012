package cluster

import (
	"fmt"
	"time"

	"github.com/apiperf/apiperf/conditions"
)

// WorkerReport is one worker's part in the last step, for the per-worker table and run.json.
type WorkerReport struct {
	Worker      int           `json:"worker"` // from 1
	Host        string        `json:"host"`
	Addr        string        `json:"addr"`
	Connections int           `json:"connections"`
	Requests    int64         `json:"requests"` // planned (-n share); 0: by duration
	Rate        float64       `json:"rate,omitempty"`
	Offset      time.Duration `json:"clock_offset"` // its clock minus the coordinator's
	RTT         time.Duration `json:"rtt"`
	// StartLag is when its measured window started, after the common start plus its phase.
	StartLag  time.Duration `json:"start_lag"`
	Responses int64         `json:"responses"`
	Errors    int64         `json:"errors"`
	QPS       float64       `json:"qps"`
	Lost      string        `json:"lost,omitempty"`
	// Machine is the worker's machine as it described it with its last step (nil: not sent),
	// Health its conditions and limits during that step (nil in records older than it).
	Machine *conditions.Generator `json:"machine,omitempty"`
	Health  *Health               `json:"health,omitempty"`
}

// Workers reports each worker's part in the last step.
func (c *Coordinator) Workers() []WorkerReport {
	var first time.Time
	for _, m := range c.members {
		if m.step != nil {
			if t := m.step.Start.Add(-m.phase); first.IsZero() || t.Before(first) {
				first = t
			}
		}
	}
	c.mu.Lock()
	last := c.last
	c.mu.Unlock()
	out := make([]WorkerReport, 0, len(c.members))
	for _, m := range c.members {
		r := WorkerReport{
			Worker: m.index + 1, Host: m.host, Addr: m.addr, Connections: m.share.Connections,
			Requests: m.share.Requests, Rate: m.share.Rate, Offset: m.offset, RTT: m.rtt,
		}
		if s := m.step; s != nil {
			r.StartLag = s.Start.Add(-m.phase).Sub(first)
			r.Responses, r.Errors, r.QPS = s.Requests, s.Errors.Total(), s.QPS()
		} else {
			for _, iv := range m.intervals {
				r.Responses += iv.Requests
				r.Errors += iv.Errors.Total()
			}
		}
		if m.gone != nil {
			r.Lost = fmt.Sprintf("lost %s: %v", m.lostWhen(), m.gone)
		}
		if m.cond != nil {
			g := m.cond.Generator
			r.Machine = &g
		}
		if k := m.index; k < len(last) {
			h := last[k]
			r.Health = &h
		}
		out = append(out, r)
	}
	return out
}

// StartSpread is the spread of the workers' actual start times in the last step (their
// open-loop phases taken out): how well the synchronized start worked.
func (c *Coordinator) StartSpread() time.Duration {
	var spread time.Duration
	for _, r := range c.Workers() {
		if r.Lost == "" {
			spread = max(spread, r.StartLag)
		}
	}
	return spread
}

// RecordVersion is the version of Record's layout: 2 added the workers' health (Steps,
// WorkerReport.Machine and Health); a record without a version is version 1 and reads
// with them nil.
const RecordVersion = 2

// Record is what run.json keeps of a scale-out: how many workers took part, their shares
// and how well they started together (of the last step), and every worker's health in
// every measured step.
type Record struct {
	Version int `json:"version,omitempty"`
	Workers int `json:"workers"`
	// Threads is the workers' threads all together (each runs its share on its own cores).
	Threads     int            `json:"threads,omitempty"`
	StartSpread time.Duration  `json:"start_spread"`
	Shares      []WorkerReport `json:"shares"`
	Lost        []string       `json:"lost,omitempty"`
	Steps       []StepHealth   `json:"steps,omitempty"`
}

// Record returns the coordinator's record of the last step.
func (c *Coordinator) Record() *Record {
	threads := 0
	for _, m := range c.members {
		threads += m.share.Threads
	}
	c.mu.Lock()
	steps := append([]StepHealth(nil), c.steps...)
	c.mu.Unlock()
	return &Record{Version: RecordVersion, Workers: len(c.members), Threads: threads, StartSpread: c.StartSpread(), Shares: c.Workers(), Lost: c.Lost(), Steps: steps}
}
