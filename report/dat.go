package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/apiperf/apiperf/compare"
)

// DatRow is one line of the classic sweep script's .dat file:
// `concurrency qps avg_latency_ms success_pct`.
type DatRow struct {
	Concurrency float64 // the level (a request rate for open-loop sweeps written by apiperf)
	QPS         float64 // Requests/sec
	AvgMS       float64 // mean latency in ms; NaN when the script wrote none
	// SuccessPct is the classic figure: responses minus socket errors over responses, in
	// percent, so non-2xx responses count as successes; NaN when the script divided by zero.
	SuccessPct float64
}

// WriteDat writes levels in the classic columns `concurrency qps avg_latency_ms success_pct`,
// one line per level, so gnuplot scripts written for the classic sweep keep working.
// success_pct keeps the classic meaning (socket errors only; a 404 counts as a success);
// apiperf's own success rate is in run.json and report.html.
func WriteDat(w io.Writer, levels []compare.Level) error {
	for _, l := range levels {
		if _, err := fmt.Fprintf(w, "%s %.2f %s %.2f\n", l.Label, l.QPS, datFloat(l.MeanMS), l.ClassicPct); err != nil {
			return fmt.Errorf("writing .dat: %w", err)
		}
	}
	return nil
}

// datFloat prints a latency like awk prints the script's (%.6g), "nan" when unknown.
func datFloat(v float64) string {
	if math.IsNaN(v) {
		return "nan"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// ReadDat reads a .dat file written by the classic sweep script (or by WriteDat): one level
// per line, fields separated by spaces or tabs; blank lines and lines starting with # are
// skipped. The script's quirks are accepted: a line of three fields has no latency (awk
// printed an empty one for minutes), and nan/inf success (it divided by zero) reads as NaN.
// name is used in errors, which read `name:line: what is wrong`.
func ReadDat(name string, r io.Reader) ([]DatRow, error) {
	var rows []DatRow
	seen := map[float64]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		row, err := parseDatLine(strings.Fields(text))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		if prev, ok := seen[row.Concurrency]; ok {
			return nil, fmt.Errorf("%s:%d: concurrency %s already on line %d", name, line, compare.FormatLevel(row.Concurrency), prev)
		}
		seen[row.Concurrency] = line
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %v", name, line+1, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s:%d: no data lines (want `concurrency qps avg_latency_ms success_pct`)", name, max(line, 1))
	}
	return rows, nil
}

func parseDatLine(f []string) (DatRow, error) {
	if len(f) != 4 && len(f) != 3 {
		return DatRow{}, fmt.Errorf("want 4 fields `concurrency qps avg_latency_ms success_pct`, got %d", len(f))
	}
	if len(f) == 3 { // the script's awk printed an empty latency
		f = []string{f[0], f[1], "nan", f[2]}
	}
	c, err := strconv.ParseFloat(f[0], 64)
	if err != nil || c <= 0 || math.IsInf(c, 0) || math.IsNaN(c) {
		return DatRow{}, fmt.Errorf("concurrency %q: want a positive number", f[0])
	}
	qps, err := strconv.ParseFloat(f[1], 64)
	if err != nil || qps < 0 || math.IsInf(qps, 0) || math.IsNaN(qps) {
		return DatRow{}, fmt.Errorf("qps %q: want a number >= 0", f[1])
	}
	avg, err := datNumber(f[2])
	if err != nil || avg < 0 {
		return DatRow{}, fmt.Errorf("avg_latency_ms %q: want milliseconds >= 0", f[2])
	}
	succ, err := datNumber(f[3])
	if err != nil || succ < 0 || succ > 100 {
		return DatRow{}, fmt.Errorf("success_pct %q: want a percentage 0-100", f[3])
	}
	return DatRow{Concurrency: c, QPS: qps, AvgMS: avg, SuccessPct: succ}, nil
}

// datNumber reads a number; awk's nan, -nan, inf and -inf read as NaN (unknown).
func datNumber(s string) (float64, error) {
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case "nan", "inf", "infinity":
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	return v, nil
}

// DatSide turns the rows of a classic .dat file into one side of a comparison: no
// percentiles, the classic success rate only.
func DatSide(name string, rows []DatRow) compare.Side {
	side := compare.Side{Name: name, Classic: true}
	for _, r := range rows {
		side.Levels = append(side.Levels, compare.Level{
			Value: r.Concurrency, Label: compare.FormatLevel(r.Concurrency), Reps: 1,
			QPS: r.QPS, MeanMS: r.AvgMS, P50MS: math.NaN(), P90MS: math.NaN(), P99MS: math.NaN(), P999MS: math.NaN(),
			SuccessPct: math.NaN(), ClassicPct: r.SuccessPct,
		})
	}
	sortLevels(side.Levels)
	return side
}
