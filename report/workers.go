package report

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/apiperf/apiperf/cluster"
)

// Workers writes the per-worker table of a scale-out's last step from its record in run.json.
func Workers(w io.Writer, rec *cluster.Record) error {
	return render(w, "the workers table", func(w io.Writer) { workers(w, rec) })
}

func workers(w io.Writer, rec *cluster.Record) {
	fmt.Fprintf(w, "  Workers: %d, start spread %v\n", rec.Workers, rec.StartSpread.Round(time.Microsecond))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "    worker\thost\tconns\tresponses\terrors\treq/s\tclock offset\trtt\tstart\t")
	for _, r := range rec.Shares {
		fmt.Fprintf(tw, "    %d\t%s\t%d\t%d\t%d\t%.1f\t%v\t%v\t+%v\t\n", r.Worker, r.Host, r.Connections, r.Responses, r.Errors, r.QPS,
			r.Offset.Round(time.Microsecond), r.RTT.Round(time.Microsecond), r.StartLag.Round(time.Microsecond))
	}
	tw.Flush()
	for _, r := range rec.Shares {
		if r.Lost != "" {
			fmt.Fprintf(w, "  worker %d %s\n", r.Worker, r.Lost)
		}
	}
}
