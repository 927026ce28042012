package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/golden"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
)

// timingRun is textRun whose step was recorded by a recorder (a fixture, not a
// measurement): 3000 responses over 3 s, every 100th slow (60 ms, db 58 ms), the others
// 3 ms with db 2 ms and app 0.5 ms, each with a trace id; some Server-Timing malformed.
func timingRun() *TimingFixture {
	r := textRun()
	rec := measure.NewRecorder(measure.DefaultExpected(), false, 0)
	rec.KeepSlowest(5)
	db, app := rec.Metric([]byte("db")), rec.Metric([]byte("app"))
	var batch []measure.Sample
	for i := range 3000 {
		s := measure.Sample{Done: int64(i+1) * int64(time.Millisecond), Latency: int64(3*time.Millisecond) + int64(i%7)*int64(time.Microsecond),
			Class: measure.Response, Status: 200, Conn: int32(i % 4), Bytes: 100, X: &measure.Extra{}}
		s.X.Trace[0], s.X.Trace[1], s.X.Trace[15] = 0xab, byte(i>>8), byte(i)
		dur := 2.0
		if i%100 == 0 {
			s.Latency, dur = int64(60*time.Millisecond)+int64(i)*int64(time.Microsecond), 58
		}
		s.X.Timing.Add(db, dur)
		s.X.Timing.Add(app, 0.5)
		if i%500 == 0 {
			s.X.Timing.Bad()
		}
		batch = append(batch, s)
	}
	rec.Add(batch)
	st := measure.Combine(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), 3*time.Second, []*measure.Recorder{rec}, nil)
	st.Label = "c=50"
	r.Steps = []*measure.Step{st}
	return &TimingFixture{resultRun: r}
}

// TimingFixture holds the run of timingRun.
type TimingFixture struct{ resultRun *result.Run }

func TestExemplarsTextGolden(t *testing.T) {
	r := timingRun().resultRun
	var b bytes.Buffer
	Text(&b, r, r.Last(), TextOptions{Latency: true})
	golden.Check(t, "text_exemplars.golden", b.Bytes())
	out := b.String()
	for _, want := range []string{
		"  Server-Timing db: p50 2.00ms, p90 2.00ms, p99 2.00ms, max 58.02ms (3000 responses)\n",
		"  Slowest 5 requests (of 3000 responses):\n",
		"trace ab0b0000000000000000000000000054", // request 2900, the slowest: 60 ms + 2.9 ms
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	Text(&b, r, r.Last(), TextOptions{})
	if strings.Contains(b.String(), "Slowest") || !strings.Contains(b.String(), "Server-Timing db:") {
		t.Errorf("without --latency the text should keep the Server-Timing lines and leave out the slowest:\n%s", b.String())
	}
}

func TestExemplarsHTMLGolden(t *testing.T) {
	r := timingRun().resultRun
	var body strings.Builder
	for _, s := range append(slices.Collect(exemplarSections(r)), slices.Collect(timingSections(r))...) {
		body.WriteString("<h2>" + s.Title + "</h2>\n" + string(s.Body) + "\n")
	}
	golden.Check(t, "exemplars_section.html", []byte(body.String()))
	for _, want := range []string{"<td>slowest 1</td><td>62.90ms</td>", "<td>db 58.00ms, app 500.00us</td>", "<code>ab0b0000000000000000000000000054</code>", "<td>p99.9</td>",
		"<td>db</td><td>2.00ms</td><td>2.00ms</td><td>2.00ms</td><td>58.02ms</td>", "6 malformed metrics were skipped", `id="chart-slowest_0"`, `id="chart-server_timing_0"`} {
		if !strings.Contains(body.String(), want) {
			t.Errorf("HTML sections lack %q", want)
		}
	}
	var page bytes.Buffer
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "<h2>Slowest requests</h2>") || !strings.Contains(page.String(), "<h2>Server-Timing</h2>") {
		t.Error("report.html lacks the Slowest requests and Server-Timing sections")
	}
}

// The requests drained after a step's window are sealed as one more interval: the latency
// per interval chart ends with the window, not with a last "second" of drained requests
// (which would look like a spike at the end of every level), and the run's timeline agrees.
func TestSlowestChartLeavesOutTheDrain(t *testing.T) {
	s := &measure.Step{Label: "c=50", Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Elapsed: measure.Duration(3 * time.Second),
		Timeline: []measure.Second{
			{T: 0, Requests: 1000, P50: 2, P99: 4}, {T: 1, Requests: 1000, P50: 2, P99: 4}, {T: 2, Requests: 1000, P50: 2, P99: 4},
			{T: 3, Requests: 40, P50: 300, P99: 900}, // drained: ended after the window
		}, Exemplars: &measure.Exemplars{}}
	c, ok := slowestChart(s)
	if !ok || len(c.XNum) != 3 || c.XNum[2] != 3 || len(c.Series) != 2 || len(c.Series[1].Y) != 3 || c.Series[1].Y[2] != 4 {
		t.Errorf("slowestChart: ok %v, x %v, series %+v; want the three seconds of the window, p99 4 ms at 3 s", ok, c.XNum, c.Series)
	}
	tl := runTimeline(&result.Run{Steps: []*measure.Step{s}}, s.Start)
	if len(tl) != 1 || len(tl[0].x) != 3 || tl[0].p99[2] != 4 {
		t.Errorf("runTimeline = %+v; want the same three seconds", tl)
	}
}
