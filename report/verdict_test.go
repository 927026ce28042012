package report

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/browsertest"
	"github.com/apiperf/apiperf/internal/golden"
	"github.com/apiperf/apiperf/profcap"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/verdict"
)

func sampleVerdict() *verdict.Verdict {
	in := verdict.Input{Peak: 1, MachineCores: 2, Levels: []verdict.Level{
		{Label: "c=8", Load: 8, QPS: 800, Mean: 10 * time.Millisecond, P99: 20 * time.Millisecond, Attempts: 4000,
			Target: &verdict.Usage{CPUCores: 0.1, Cores: 2}},
		{Label: "c=64", Load: 64, QPS: 810, Mean: 79 * time.Millisecond, P99: 90 * time.Millisecond, Attempts: 4050,
			Target: &verdict.Usage{CPUCores: 0.1, Cores: 2},
			Profile: &verdict.Profile{Goroutines: 140, Waits: []verdict.Wait{{Site: "sync.(*Cond).Wait from <script>x</script>", Count: 60}},
				Block: []verdict.Contention{{Site: "sync.(*Mutex).Lock from main.(*pool).get", Events: 800, Waiting: 59.5, Pct: 99.2}},
				Mutex: []verdict.Contention{{Site: "sync.(*Mutex).Unlock from main.(*pool).put", Events: 790, Waiting: 55.1, Pct: 98.7}}}},
	}}
	v := verdict.Judge(in)
	return &v
}

func TestVerdictText(t *testing.T) {
	got := VerdictText(sampleVerdict())
	golden.Check(t, "verdict.txt", []byte(got))
	// One claim: its line is the verdict's, not repeated under a headline of its kind.
	if !strings.HasPrefix(got, "verdict: target-waiting (high): the target waits off-CPU") || strings.Count(got, "target-waiting (high)") != 1 {
		t.Errorf("VerdictText of one claim =\n%s\nwant it to start with the claim, said once", got)
	}
	two := *sampleVerdict()
	two.Claims = append(two.Claims, verdict.Claim{Kind: verdict.GCTail, Confidence: verdict.Medium, Summary: "garbage collection makes the tail"})
	if got := VerdictText(&two); !strings.HasPrefix(got, "verdict: target-waiting (high), gc-tail (medium)\n  target-waiting (high): ") ||
		!strings.Contains(got, "\n  gc-tail (medium): garbage collection makes the tail\n") {
		t.Errorf("VerdictText of two claims =\n%s\nwant the headline listing both, then each claim", got)
	}
	for _, want := range []string{
		"verdict: target-waiting (high)",
		"    - throughput stopped growing from c=8 to c=64",
		"    - 60 of 140 request goroutines wait in sync.(*Cond).Wait",
		"    - block profile at c=64: 59.5 goroutines on average blocked in sync.(*Mutex).Lock from main.(*pool).get (99% of the time blocked, 800 waits)",
		"    fix: widen or remove",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("VerdictText =\n%s\nwant a line containing %q", got, want)
		}
	}
}

func TestVerdictSectionEscapes(t *testing.T) {
	sec := verdictSection(&result.Run{Verdict: sampleVerdict()})
	if sec == nil {
		t.Fatal("verdictSection of a judged run: nil, want a section")
	}
	body := string(sec.Body)
	golden.Check(t, "verdict_section.html", []byte(body))
	if strings.Contains(body, "<script>") || !strings.Contains(body, "&lt;script&gt;") {
		t.Errorf("verdict section does not escape a wait site from the target:\n%s", body)
	}
	if strings.Contains(body, "verdict-headline") { // one claim: its heading says it, no headline above it
		t.Errorf("verdict section of one claim repeats it in a headline:\n%s", body)
	}
	if !strings.Contains(body, `data-kind="target-waiting"`) || !strings.Contains(body, `id="little"`) {
		t.Errorf("verdict section lacks the claim or the Little's law table:\n%s", body)
	}
	if sec.Title != "Verdict: why it is slow" {
		t.Errorf("title with a claim = %q, want %q", sec.Title, "Verdict: why it is slow")
	}
	// Nothing was slow: the title does not ask why.
	if quiet := verdictSection(&result.Run{Verdict: &verdict.Verdict{}}); quiet == nil || quiet.Title != "Verdict" {
		t.Errorf("title without claims = %+v, want \"Verdict\"", quiet)
	}
	if got := verdictSection(&result.Run{}); got != nil {
		t.Errorf("verdictSection of an unjudged run = %v, want none", got)
	}
}

// TestVerdictFirstInReport: the verdict is the first section after the headline, before charts.
func TestVerdictFirstInReport(t *testing.T) {
	r := synthSweep()
	r.Verdict = sampleVerdict()
	var b strings.Builder
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	v, h, c := strings.Index(page, `id="verdict"`), strings.Index(page, `id="headline"`), strings.Index(page, "<h2>Charts</h2>")
	if v < 0 || !(h < v && v < c) {
		t.Errorf("verdict at %d, headline at %d, charts at %d: want the verdict right after the headline", v, h, c)
	}
}

// TestSweepTableTargetColumns: with the target's process sampled, the sweep table shows its
// CPU and RSS beside QPS; without, the columns are left out.
func TestSweepTableTargetColumns(t *testing.T) {
	r := synthSweep()
	var b strings.Builder
	SweepTable(&b, r)
	if strings.Contains(b.String(), "target CPU") {
		t.Errorf("sweep table without target samples has target columns:\n%s", b.String())
	}
	r.Target = &profcap.Record{}
	for _, s := range r.Steps {
		r.Target.Steps = append(r.Target.Steps, profcap.StepRecord{Label: s.Label,
			ProcessSummary: &profcap.Summary{Points: 2, CPUCores: &profcap.Stat{Mean: 0.75, N: 2}, RSSBytes: &profcap.Stat{Max: 30 << 20, N: 2}}})
	}
	b.Reset()
	SweepTable(&b, r)
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[0], "target CPU") || !strings.Contains(lines[1], "0.75") || !strings.Contains(lines[1], "30.0M") {
		t.Errorf("sweep table with the target's process sampled:\n%s\nwant target CPU 0.75 and RSS 30.0M on every level", b.String())
	}
}

// TestVerdictAndProcessInBrowser: report.html with a verdict and the target's process
// sampled shows the verdict section and draws the process charts.
func TestVerdictAndProcessInBrowser(t *testing.T) {
	r := synthSweep()
	r.Target = &profcap.Record{}
	for i, s := range r.Steps {
		cpu := 0.3 + 0.2*float64(i)
		r.Target.Steps = append(r.Target.Steps, profcap.StepRecord{Label: s.Label,
			Process:        &profcap.Series{URL: "/proc/4242", Cores: 2},
			ProcessSummary: &profcap.Summary{Points: 2, CPUCores: &profcap.Stat{Mean: cpu, Max: cpu, N: 2}, RSSBytes: &profcap.Stat{Mean: 20 << 20, Max: 21 << 20, N: 2}}})
	}
	r.Judge()
	dir := t.TempDir()
	if _, err := WriteAll(dir, r); err != nil {
		t.Fatal(err)
	}
	p := browsertest.Open(t, filepath.Join(dir, HTMLFile))
	checkPage(t, p, []string{"target_process_cpu", "target_process_rss"})
	if len(r.Verdict.Claims) == 1 { // one claim: its heading says it, no headline above it
		if got := p.Text(t, ".claim h3"); !strings.HasPrefix(got, fmt.Sprint(r.Verdict.Claims[0].Kind)) {
			t.Errorf("the one claim's heading = %q, want its kind %s", got, r.Verdict.Claims[0].Kind)
		}
	} else if got := p.Text(t, ".verdict-headline"); !strings.HasPrefix(got, "verdict: ") {
		t.Errorf("verdict headline = %q", got)
	}
	if got := p.Text(t, "#target-process"); !strings.Contains(got, "0.50") || !strings.Contains(got, "20.0") {
		t.Errorf("target process table = %q, want CPU 0.50 and RSS 20.0 MiB at a level", got)
	}
}

// TestTargetContentionText: the block and mutex profiles' sites are listed after the CPU
// table, with the time waited, its share and how many goroutines waited on average.
func TestTargetContentionText(t *testing.T) {
	c := &profcap.Contention{Kind: profcap.KindBlock, Seconds: 1, DelayNs: 60_300_000_000, Events: 812, Sites: []profcap.ContendSite{
		{Function: "sync.(*Mutex).Lock", Caller: "main.(*pool).get", Events: 800, DelayNs: 59_800_000_000},
		{Function: "sync.(*Cond).Wait", Events: 12, DelayNs: 500_000_000},
	}}
	m := &profcap.Contention{Kind: profcap.KindMutex, Seconds: 1, DelayNs: 55_000_000_000, Events: 790, Sites: []profcap.ContendSite{
		{Function: "sync.(*Mutex).Unlock", Caller: "main.(*pool).put", Events: 790, DelayNs: 55_000_000_000},
	}}
	tc := &profcap.Record{Steps: []profcap.StepRecord{{Label: "c=64", Profiles: &profcap.Analysis{Block: c, Mutex: m}}}}
	var b strings.Builder
	TargetText(&b, tc, 5, "out")
	golden.Check(t, "target_contention.txt", []byte(b.String()))
	if !strings.Contains(b.String(), "59.8      800  sync.(*Mutex).Lock from main.(*pool).get") {
		t.Errorf("TargetText =\n%s\nwant the pool's lock with 59.8 goroutines waiting on average", b.String())
	}
}

// When other processes took CPU, the text and the HTML verdict list the machine's CPU per
// level by who used it.
func TestVerdictSharedMachine(t *testing.T) {
	in := verdict.Input{Peak: 1, MachineCores: 2, SameMachine: true, Levels: []verdict.Level{
		{Label: "c=5", Load: 5, QPS: 500, Mean: 10 * time.Millisecond, Attempts: 2500,
			Generator: &verdict.Usage{CPUCores: 0.1, Cores: 2}, Target: &verdict.Usage{CPUCores: 0.5, Cores: 2},
			Machine: &verdict.Machine{CPUs: 2, Busy: 1.9}},
		{Label: "c=20", Load: 20, QPS: 600, Mean: 33 * time.Millisecond, Attempts: 3000,
			Generator: &verdict.Usage{CPUCores: 0.1, Cores: 2}, Target: &verdict.Usage{CPUCores: 0.6, Cores: 2},
			Machine: &verdict.Machine{CPUs: 2, Busy: 2}},
	}}
	v := verdict.Judge(in)
	text := VerdictText(&v)
	if !strings.Contains(text, "Other processes took CPU on this machine") || !strings.Contains(text, "    - c=20: 2.0 of 2 cores busy: apiperf 0.10, the target 0.60, other processes 1.30") {
		t.Errorf("VerdictText =\n%s\nwant the machine's CPU per level", text)
	}
	sec := verdictSection(&result.Run{Verdict: &v})
	if body := string(sec.Body); !strings.Contains(body, `<table id="machine">`) || !strings.Contains(body, "<td>c=20</td><td>2</td><td>2.00</td><td>0.10</td><td>0.60</td><td>1.30</td>") {
		t.Errorf("verdict section lacks the machine table:\n%s", body)
	}
}

// The target process's note says how its PID was found: --target-pid only when given, else
// the port apiperf found it listening on by itself.
func TestProcessNoteSaysHowFound(t *testing.T) {
	for _, tt := range []struct{ source, want, lack string }{
		{"listening on 127.0.0.1:8080", "every second (found listening on 127.0.0.1:8080)", "--target-pid"},
		{"--target-pid", "every second (--target-pid)", "found"},
	} {
		r := synthSweep()
		r.Target = &profcap.Record{PIDSource: tt.source}
		for _, s := range r.Steps {
			r.Target.Steps = append(r.Target.Steps, profcap.StepRecord{Label: s.Label, Process: &profcap.Series{URL: "/proc/4242", Cores: 2},
				ProcessSummary: &profcap.Summary{Points: 2, CPUCores: &profcap.Stat{Mean: 0.5, Max: 0.5, N: 2}, RSSBytes: &profcap.Stat{Mean: 20 << 20, Max: 21 << 20, N: 2}}})
		}
		secs := processSections(r)
		if len(secs) != 1 {
			t.Fatalf("processSections: %d sections, want 1", len(secs))
		}
		note := string(secs[0].Body)
		note = note[strings.Index(note, `<p class="note">`):]
		if !strings.Contains(note, tt.want) || strings.Contains(note, tt.lack) {
			t.Errorf("PID source %q: note %q; want %q, not %q", tt.source, note, tt.want, tt.lack)
		}
	}
}
