package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/exectrace"
	"github.com/apiperf/apiperf/internal/golden"
	"github.com/apiperf/apiperf/profcap"
)

// synthTrace is a trace summary with one of everything; names the target chose are hostile.
func synthTrace(gcCycles int, procs int) *exectrace.Summary {
	ms, us := time.Millisecond, time.Microsecond
	return &exectrace.Summary{
		Span: time.Second, GOMAXPROCS: procs, BusyPs: 1.4, GCCycles: gcCycles, STWCount: 2 * gcCycles,
		STWTotal: 1200 * us, STWMax: 310 * us, GCWorkers: 90 * ms, GCAssist: 30 * ms, Running: time.Second,
		Sched:  exectrace.Latency{Count: 1000, P50: 8 * us, P99: 1200 * us, Max: 3 * ms},
		States: []exectrace.StateTime{{State: exectrace.StateRunning, Time: 900 * ms, Pct: 30}, {State: exectrace.StateChannel, Time: 2100 * ms, Pct: 70}},
		Blocking: []exectrace.BlockGroup{{Group: exectrace.GroupSync, Total: 2 * time.Second, Stacks: []exectrace.BlockStack{{
			Frames: []exectrace.Frame{{Func: "runtime.chanrecv1", File: "chan.go", Line: 509}, {Func: evilName, File: "main.go", Line: 7}},
			Time:   2 * time.Second, Count: 800}}}},
		Regions: []exectrace.Span{{Name: "<b>burn</b>", Count: 10, Total: 50 * ms, Mean: 5 * ms, Max: 9 * ms}},
		Tasks:   []exectrace.Span{{Name: "request", Count: 10, Total: 60 * ms, Mean: 6 * ms, Max: 10 * ms}},
	}
}

func tracedStep(s *exectrace.Summary) profcap.StepRecord {
	return profcap.StepRecord{Label: "c=8", Files: []string{"profiles/c=8/trace.out"},
		Trace: &profcap.TraceRecord{From: 2 * time.Second, Length: time.Second, Bytes: 3 << 20, Summary: s}}
}

func TestTraceText(t *testing.T) {
	var b bytes.Buffer
	TargetText(&b, &profcap.Record{Steps: []profcap.StepRecord{tracedStep(synthTrace(41, 2))}}, 10, "out")
	TraceDiffText(&b, &compare.TraceDiff{LevelA: "c=8", LevelB: "c=8",
		Rows: compare.TraceRows([]*exectrace.Summary{synthTrace(41, 1), synthTrace(6, 2)})})
	want := "Target trace at c=8 (1s): GC 41.0 cycles/s, STW 1.2ms (max 310us), GC CPU 12% (assist 3%), sched latency p50 8us p99 1.2ms, GOMAXPROCS 2 (1.4 busy)"
	if !strings.Contains(b.String(), want) {
		t.Errorf("text lacks the issue's line %q:\n%s", want, b.String())
	}
	if !strings.Contains(b.String(), "GC cycles per second             41.0 -> 6.0") {
		t.Errorf("trace diff lacks \"GC cycles per second 41.0 -> 6.0\":\n%s", b.String())
	}
	golden.Check(t, "trace.txt", b.Bytes())
}

func TestCompareTraceText(t *testing.T) {
	m := &compare.Multi{Variants: []compare.Variant{
		{Side: compare.Side{Name: "gogc100"}, TraceLevel: "c=8", Trace: synthTrace(41, 2)},
		{Side: compare.Side{Name: "gogc400"}, TraceLevel: "c=8", Trace: synthTrace(6, 2)},
		{Side: compare.Side{Name: "untraced"}},
	}}
	var b bytes.Buffer
	if err := compareTraceText(&b, m); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "compare_trace.txt", b.Bytes())
	var page bytes.Buffer
	if err := CompareHTML(&page, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `<table id="trace">`) || !strings.Contains(page.String(), "<td>41.0</td><td>6.0</td><td>-</td>") {
		t.Errorf("compare.html lacks the trace table with GC cycles per second 41.0, 6.0 and -")
	}
}

func TestTraceSectionEscapes(t *testing.T) {
	ts := tracedStep(synthTrace(41, 2))
	body, err := traceSection(&ts, 0)
	if err != nil {
		t.Fatal(err)
	}
	page := string(body)
	if strings.Contains(page, "<script>alert(3)") || strings.Contains(page, "<b>burn") {
		t.Errorf("trace section carries the target's names unescaped")
	}
	for _, want := range []string{`id="trace-summary-0"`, `id="trace-states-0"`, "channel/select", "go tool trace -pprof=sync",
		"&lt;b&gt;burn&lt;/b&gt;", "profiles/c=8/trace.out", "41 (41.0 per second)"} {
		if !strings.Contains(page, want) {
			t.Errorf("trace section lacks %q", want)
		}
	}
	golden.Check(t, "trace_section.html", []byte(page))
}
