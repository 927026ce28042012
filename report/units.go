// Package report renders runs: wrk-style text, JSON, the classic .dat file, CSV, Go
// benchmark format, charts and the HTML report. It never measures anything itself.
//
// A new renderer is an exported func(w io.Writer, <record>) error beside the renderers of
// the same record (text.go for a step, sweep.go for a sweep, verdict.go for a verdict),
// reading only what run.json holds so that `apiperf report` can redo it, and returning its
// write error (render keeps it for code that writes with fmt.Fprintf).
package report

import (
	"fmt"
	"time"
)

// unitScale is one of wrk's unit ladders.
type unitScale struct {
	scale float64
	base  string
	units []string
}

var (
	timeUS = unitScale{1000, "us", []string{"ms", "s"}}
	timeS  = unitScale{60, "s", []string{"m", "h"}}
	binary = unitScale{1024, "", []string{"K", "M", "G", "T", "P"}}
	metric = unitScale{1000, "", []string{"k", "M", "G", "T", "P"}}
)

// format scales n the way wrk's format_units does: step up while the value is at least 85%
// of the next unit, never to the last unit of the ladder.
func (u unitScale) format(n float64, prec int) string {
	amt, unit := n, u.base
	for i := 0; i+1 < len(u.units) && amt >= u.scale*0.85; i++ {
		amt /= u.scale
		unit = u.units[i]
	}
	return fmt.Sprintf("%.*f%s", prec, amt, unit)
}

// FormatTimeUS formats microseconds as wrk does: 850.00us, 1.23ms, 2.00s, 1.50m.
func FormatTimeUS(us float64) string {
	if us >= 1e6 {
		return timeS.format(us/1e6, 2)
	}
	return timeUS.format(us, 2)
}

// FormatDuration formats d for a latency column (wrk's time format).
func FormatDuration(d time.Duration) string {
	return FormatTimeUS(float64(d) / float64(time.Microsecond))
}

// FormatBinary formats a byte count with K/M/G (1024).
func FormatBinary(n float64) string { return binary.format(n, 2) }

// FormatMetric formats a count with k/M/G (1000).
func FormatMetric(n float64) string { return metric.format(n, 2) }

// FormatTestDuration formats the run length in the header line: 10s, 5m.
func FormatTestDuration(d time.Duration) string { return timeS.format(d.Seconds(), 0) }

// units pads a formatted value to width like wrk's print_units: numbers are followed by two
// columns for the unit, so values line up whatever their unit.
func units(msg string, width int) string {
	pad := 2
	n := len(msg)
	if n > 0 && isAlpha(msg[n-1]) {
		pad--
	}
	if n > 1 && isAlpha(msg[n-2]) {
		pad--
	}
	return fmt.Sprintf("%*s%s", width-pad, msg, "  "[:pad])
}

func isAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
