package live

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// sparkWidth is how many intervals a sparkline shows.
const sparkWidth = 20

// termView draws a few lines on a terminal, redrawn in place once per interval, and erased
// when the command ends so that only the summary stays.
type termView struct {
	w     io.Writer
	kind  string
	start time.Time

	mu     sync.Mutex
	st     Phase
	stepAt time.Time
	lines  int // lines drawn last time
	qps    []float64
	p99    []float64
	warm   time.Duration // the latest warmup step's length, for the ETA
	meas   time.Duration // the latest measured step's length
}

func newTermView(w io.Writer, kind string, start time.Time) *termView {
	return &termView{w: w, kind: kind, start: start}
}

func (v *termView) step(st Phase) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.st, v.stepAt = st, time.Now()
	v.qps, v.p99 = v.qps[:0], v.p99[:0]
	if st.Warmup {
		v.warm = st.Load.Duration.Duration()
	} else {
		v.meas = st.Load.Duration.Duration()
	}
}

func (v *termView) interval(iv *measure.Interval) {
	v.mu.Lock()
	defer v.mu.Unlock()
	sec := iv.Second()
	v.qps = appendLast(v.qps, iv.QPS())
	v.p99 = appendLast(v.p99, sec.P99)
	head := heading(v.st, time.Since(v.start), eta(v.st, time.Since(v.stepAt), v.warm, v.meas))
	v.draw(head + render(v.st, iv, sec, v.qps, v.p99))
}

func appendLast(xs []float64, x float64) []float64 {
	xs = append(xs, x)
	if len(xs) > sparkWidth {
		xs = xs[len(xs)-sparkWidth:]
	}
	return xs
}

// draw replaces the lines drawn last time with text.
func (v *termView) draw(text string) {
	var b strings.Builder
	if v.lines > 0 {
		fmt.Fprintf(&b, "\r\033[%dA", v.lines)
	}
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString("\r\033[K")
		b.WriteString(line)
		b.WriteString("\n")
	}
	b.WriteString("\033[J")
	v.lines = strings.Count(text, "\n")
	_, _ = io.WriteString(v.w, b.String())
}

// close erases the view.
func (v *termView) close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.lines > 0 {
		fmt.Fprintf(v.w, "\r\033[%dA\033[J", v.lines)
		v.lines = 0
	}
}

// eta estimates the time left: the rest of this step (its in-run warmup included) and, in a
// sweep, the levels after it, each a warmup and a measured step as long as the latest ones.
// 0 when the steps have no duration (-n).
func eta(st Phase, inStep, warm, meas time.Duration) time.Duration {
	d := st.Load.Duration.Duration()
	if d <= 0 {
		return 0
	}
	left := max(st.Load.Warmup.Duration()+d-inStep, 0)
	if st.Levels > 0 && st.Level > 0 {
		if st.Warmup {
			left += meas // this level's measured step follows
		}
		left += time.Duration(st.Levels-st.Level) * (warm + meas)
	}
	return left
}

// heading is the view's first line: elapsed, ETA, which level or probe, the step's name.
func heading(st Phase, elapsed, left time.Duration) string {
	head := "  " + elapsed.Truncate(time.Second).String() + " elapsed"
	if st.Load.Duration > 0 {
		head += ", ETA " + left.Truncate(time.Second).String()
	}
	switch {
	case st.Levels > 0:
		head += fmt.Sprintf("  ·  level %d of %d", st.Level, st.Levels)
	case st.Level > 0:
		head += fmt.Sprintf("  ·  probe %d", st.Level)
	}
	if name := cmp.Or(st.Name, st.Label); name != "" {
		head += "  ·  " + name
	}
	if st.Warmup {
		head += " (not measured)"
	}
	return head + "\n"
}

// render is the rest of the view of one interval: plain text, one line per topic.
func render(st Phase, iv *measure.Interval, sec measure.Second, qps, p99 []float64) string {
	var b strings.Builder
	rate := fmt.Sprintf("  req/s    %-9s %s", fmtNum(iv.QPS()), spark(qps))
	if iv.TargetRate > 0 {
		rate += fmt.Sprintf("  target %s/s, lag %s", fmtNum(iv.TargetRate), fmtMs(float64(iv.Lag)/1e6))
	}
	b.WriteString(rate + "\n")
	fmt.Fprintf(&b, "  latency  p50 %s  p99 %s  max %s  %s\n", fmtMs(sec.P50), fmtMs(sec.P99), fmtMs(sec.Max), spark(p99))
	b.WriteString(streamLine(iv))
	errs := "0"
	if n := iv.Errors.Total(); n > 0 {
		errs = fmt.Sprintf("%d (%s)", n, iv.Errors)
	}
	conns := fmt.Sprintf("connections %d", iv.Connections)
	if iv.InFlight >= 0 && iv.TargetRate > 0 {
		conns = fmt.Sprintf("in flight %d of %d connections", iv.InFlight, iv.Connections)
	}
	fmt.Fprintf(&b, "  errors   %s   %s\n", errs, conns)
	return b.String()
}

var sparks = []rune("▁▂▃▄▅▆▇█")

// spark draws xs as a sparkline scaled to its own maximum.
func spark(xs []float64) string {
	var mx float64
	for _, x := range xs {
		mx = max(mx, x)
	}
	var b strings.Builder
	for _, x := range xs {
		i := 0
		if mx > 0 {
			i = int(x / mx * float64(len(sparks)-1))
		}
		b.WriteRune(sparks[min(max(i, 0), len(sparks)-1)])
	}
	return b.String()
}

func fmtNum(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

func fmtMs(ms float64) string {
	switch {
	case ms >= 1000:
		return fmt.Sprintf("%.2fs", ms/1000)
	case ms >= 10:
		return fmt.Sprintf("%.1fms", ms)
	default:
		return fmt.Sprintf("%.2fms", ms)
	}
}
