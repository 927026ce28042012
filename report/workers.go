package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apiperf/apiperf/cluster"
	"github.com/apiperf/apiperf/result"
)

// Workers writes the per-worker table of a scale-out's last step from its record in run.json:
// each worker's share, clock and start, its own CPU and machine, and, below it, every worker
// that was generator-limited or generator-bound in a step, with its reason.
func Workers(w io.Writer, rec *cluster.Record) error {
	return render(w, "the workers table", func(w io.Writer) { workers(w, rec) })
}

func workers(w io.Writer, rec *cluster.Record) {
	fmt.Fprintf(w, "  Workers: %d, start spread %v\n", rec.Workers, rec.StartSpread.Round(time.Microsecond))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "    worker\thost\tconns\topened\tresponses\terrors\treq/s\tclock offset\trtt\tstart\tcpu\trun wait\tothers\tsteal\thealth\t")
	for _, r := range rec.Shares {
		fmt.Fprintf(tw, "    %d\t%s\t%d\t%s\t%d\t%d\t%.1f\t%v\t%v\t+%v\t%s\t\n", r.Worker, r.Host, r.Connections, opened(r.Health), r.Responses, r.Errors, r.QPS,
			r.Offset.Round(time.Microsecond), r.RTT.Round(time.Microsecond), r.StartLag.Round(time.Microsecond), healthColumns(r.Health))
	}
	tw.Flush()
	for _, r := range rec.Shares {
		if r.Lost != "" {
			fmt.Fprintf(w, "  worker %d %s\n", r.Worker, r.Lost)
		}
	}
	steps := rec.Steps
	if len(steps) == 0 { // a record without the hook's steps: the last step's health
		var last cluster.StepHealth
		for _, r := range rec.Shares {
			if r.Health != nil {
				last.Workers = append(last.Workers, *r.Health)
			}
		}
		steps = []cluster.StepHealth{last}
	}
	for _, s := range steps {
		at := ""
		if s.Label != "" {
			at = " at " + s.Name()
		}
		for _, h := range s.Workers {
			if why := h.Reason(); why != "" {
				fmt.Fprintf(w, "  worker %d%s: %s\n", h.Worker, at, why)
			}
		}
	}
	for _, r := range rec.Shares {
		if h := r.Health; h != nil && h.Errors.Total() > 0 {
			e := h.Errors
			fmt.Fprintf(w, "  worker %d errors: connect %d, read %d, write %d, timeout %d, status %d, protocol %d\n",
				r.Worker, e.Connect, e.Read, e.Write, e.Timeout, e.Status, e.Protocol)
		}
	}
	for _, r := range rec.Shares {
		if h := r.Health; h != nil && h.Conditions != nil && h.Conditions.OthersHasTarget {
			fmt.Fprintln(w, "  others*: the target runs on the worker's machine and its CPU is among the other processes'")
			break
		}
	}
	for _, r := range rec.Shares {
		if r.Machine != nil {
			fmt.Fprintf(w, "  worker %d machine: %s\n", r.Worker, r.Machine)
		}
	}
}

// workersSections is the Workers section of a scaled-out run's report: the workers table
// as the text outputs print it, escaped (host names are the workers' own words).
func workersSections(r *result.Run) []Section {
	if r.Cluster == nil {
		return nil
	}
	var b strings.Builder
	workers(&b, r.Cluster)
	return []Section{{Title: "Workers", Body: template.HTML(`<pre id="workers">` + template.HTMLEscapeString(b.String()) + "</pre>")}}
}

// opened is the connections a worker opened, "-" when unknown (a record older than it).
func opened(h *cluster.Health) string {
	if h == nil {
		return "-"
	}
	return fmt.Sprint(h.Opened)
}

// healthColumns are the cpu, run wait, others, steal and health cells of a worker: its own
// CPU of its cores, the CPU its threads waited for, what other processes of its machine took
// and the hypervisor's steal, and its mark ("ok" when none); "-" where unknown.
func healthColumns(h *cluster.Health) string {
	cpu, wait, others, steal, mark := "-", "-", "-", "-", "-"
	if h != nil {
		mark = h.Mark()
		if mark == "" {
			mark = "ok"
		}
		if g := h.Generator; g != nil {
			cpu, wait = fmt.Sprintf("%.2f of %g", g.CPUCores(), g.Cores), fmt.Sprintf("%.2f", g.RunWaitCores())
		}
		if c := h.Conditions; c != nil {
			others, steal = fmt.Sprintf("%.2f", c.Others), fmt.Sprintf("%.1f%%", c.StealPct)
			if c.OthersHasTarget {
				others += "*"
			}
		}
	}
	return cpu + "\t" + wait + "\t" + others + "\t" + steal + "\t" + mark
}
