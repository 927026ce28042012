package report

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/sweep"
)

// WriteDat writes levels in the classic columns `concurrency qps avg_latency_ms success_pct`,
// one line per level, so gnuplot scripts written for the classic sweep keep working.
// success_pct keeps the classic meaning (socket errors only; a 404 counts as a success);
// apiperf's own success rate is in run.json and report.html. A streamed run's lines go on
// with datStreamColumns (a comment line first names every column); other runs' do not.
func WriteDat(w io.Writer, levels []sweep.Level) error {
	streamed := slices.ContainsFunc(levels, func(l sweep.Level) bool { return l.Stream != nil })
	if streamed {
		if _, err := fmt.Fprintf(w, "# concurrency qps avg_latency_ms success_pct %s\n", strings.Join(datStreamColumns, " ")); err != nil {
			return fmt.Errorf("writing .dat: %w", err)
		}
	}
	for _, l := range levels {
		// Comment lines, which the classic readers and ReadDat skip.
		if l.Interrupted {
			if _, err := fmt.Fprintf(w, "# %s interrupted: partial (measured less than planned)\n", sweep.FormatValue(l.Value)); err != nil {
				return fmt.Errorf("writing .dat: %w", err)
			}
		}
		if l.GeneratorLimited() {
			if _, err := fmt.Fprintf(w, "# %s %s: apiperf's ceiling, not the target's\n", sweep.FormatValue(l.Value), l.GeneratorLimit.Brief()); err != nil {
				return fmt.Errorf("writing .dat: %w", err)
			}
		}
		stream := ""
		if streamed {
			stream = datStream(l.Stream)
		}
		if _, err := fmt.Fprintf(w, "%s %.2f %s %.2f%s\n", sweep.FormatValue(l.Value), l.QPS, datFloat(l.MeanMillis()), l.Classic, stream); err != nil {
			return fmt.Errorf("writing .dat: %w", err)
		}
	}
	return nil
}

// datStreamColumns are the columns a streamed run's .dat adds: its time to first message
// (p50, p99) and p99 gap in milliseconds, and its messages per stream.
var datStreamColumns = []string{"first_p50_ms", "first_p99_ms", "gap_p99_ms", "messages_per_stream"}

// datStream is a level's stream columns, each after a space; "nan" for a level without streams.
func datStream(s *sweep.StreamLevel) string {
	if s == nil {
		return strings.Repeat(" nan", len(datStreamColumns))
	}
	ms := func(d measure.Duration) string { return datFloat(float64(d) / float64(time.Millisecond)) }
	per := math.NaN()
	if s.Streams > 0 {
		per = float64(s.Messages) / float64(s.Streams)
	}
	return " " + ms(s.FirstP50) + " " + ms(s.FirstP99) + " " + ms(s.GapP99) + " " + datFloat(per)
}

// datFloat prints a latency like awk prints the script's (%.6g), "nan" when unknown.
func datFloat(v float64) string {
	if math.IsNaN(v) {
		return "nan"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// ReadDat reads a .dat file written by the classic sweep script (or by WriteDat) as partial
// levels (sweep.Level.Partial: QPS, mean latency and the classic success rate): one level
// per line, fields separated by spaces or tabs; blank lines and lines starting with # are
// skipped; a streamed run's .dat (WriteDat) has its stream columns after the four, not read.
// The script's quirks are accepted: a line of three fields has no latency (awk
// printed an empty one for minutes), and nan/inf success (it divided by zero) reads as NaN.
// name is used in errors, which read `name:line: what is wrong`.
func ReadDat(name string, r io.Reader) ([]sweep.Level, error) {
	var rows []sweep.Level
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
		if prev, ok := seen[row.Value]; ok {
			return nil, fmt.Errorf("%s:%d: concurrency %s already on line %d", name, line, sweep.FormatValue(row.Value), prev)
		}
		seen[row.Value] = line
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

func parseDatLine(f []string) (sweep.Level, error) {
	if len(f) == 4+len(datStreamColumns) {
		f = f[:4]
	}
	if len(f) != 4 && len(f) != 3 {
		return sweep.Level{}, fmt.Errorf("want 4 fields `concurrency qps avg_latency_ms success_pct`, got %d", len(f))
	}
	if len(f) == 3 { // the script's awk printed an empty latency
		f = []string{f[0], f[1], "nan", f[2]}
	}
	c, err := strconv.ParseFloat(f[0], 64)
	if err != nil || c <= 0 || math.IsInf(c, 0) || math.IsNaN(c) {
		return sweep.Level{}, fmt.Errorf("concurrency %q: want a positive number", f[0])
	}
	qps, err := strconv.ParseFloat(f[1], 64)
	if err != nil || qps < 0 || math.IsInf(qps, 0) || math.IsNaN(qps) {
		return sweep.Level{}, fmt.Errorf("qps %q: want a number >= 0", f[1])
	}
	avg, err := datNumber(f[2])
	if err != nil || avg < 0 {
		return sweep.Level{}, fmt.Errorf("avg_latency_ms %q: want milliseconds >= 0", f[2])
	}
	succ, err := datNumber(f[3])
	if err != nil || succ < 0 || succ > 100 {
		return sweep.Level{}, fmt.Errorf("success_pct %q: want a percentage 0-100", f[3])
	}
	mean := measure.Duration(-1) // unknown
	if !math.IsNaN(avg) {
		mean = measure.Duration(avg * float64(time.Millisecond))
	}
	return sweep.Level{Label: sweep.Label(false, c), Value: c, Reps: 1, QPS: qps, Mean: mean, Classic: succ, Partial: true}, nil
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

// DatSide makes the partial levels of a classic .dat file one side of a comparison.
func DatSide(name string, levels []sweep.Level) compare.Side {
	side := compare.Side{Name: name, Classic: true, Levels: slices.Clone(levels)}
	slices.SortStableFunc(side.Levels, func(a, b sweep.Level) int { return cmp.Compare(a.Value, b.Value) })
	return side
}
