package verdict

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/apiperf/apiperf/measure"
)

func rank(c Confidence) int {
	switch c {
	case High:
		return 3
	case Medium:
		return 2
	}
	return 1
}

// lower is the weaker of two confidences.
func lower(a, b Confidence) Confidence {
	if rank(b) < rank(a) {
		return b
	}
	return a
}

func functions(fs []Function, n int) string {
	var parts []string
	for _, f := range fs[:min(n, len(fs))] {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", f.Name, f.Pct))
	}
	return strings.Join(parts, ", ")
}

func series(ls []Level, f func(*Usage) string) string {
	var parts []string
	for _, l := range ls {
		parts = append(parts, l.Label+" "+f(l.Target))
	}
	return strings.Join(parts, ", ")
}

func statuses(m map[int]int64) string {
	codes := make([]int, 0, len(m))
	for c := range m {
		if c < 200 || c >= 400 {
			codes = append(codes, c)
		}
	}
	slices.Sort(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d x%d", c, m[c]))
	}
	return strings.Join(parts, ", ")
}

// statusEvidence is the failing statuses of a level: "status codes: 500 x12", or for gRPC
// "gRPC status: UNAVAILABLE=34" (OK left out).
func statusEvidence(m map[int]int64, grpc bool) string {
	if !grpc {
		return "status codes: " + statuses(m)
	}
	failed := map[int]int64{}
	for c, n := range m {
		if c != 0 {
			failed[c] = n
		}
	}
	return "gRPC status: " + measure.GRPCStatusLine(failed)
}

// num formats a count or rate with thousands separators, e.g. 4,812 or 1,234.5.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprint(v)
	}
	neg := v < 0
	v = math.Abs(v)
	s := fmt.Sprintf("%.0f", v)
	if v < 100 && v != math.Trunc(v) {
		s = fmt.Sprintf("%.1f", v)
	}
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func dur(d time.Duration) string {
	switch {
	case d >= 10*time.Millisecond:
		return d.Round(time.Millisecond).String()
	case d >= 100*time.Microsecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}
