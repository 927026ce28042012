package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/apiperf/apiperf/internal/browsertest"
	"github.com/apiperf/apiperf/internal/golden"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/target"
)

// hlogJSDir holds the hdr-histogram-js reader (.ci/run installs it with npm ci).
const hlogJSDir = "../../live/testdata/hlogjs"

// needTool skips (or, with $CI set, fails) a test when a program it needs is missing.
func needTool(t *testing.T, what string, ok bool, install string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("CI is set but %s is missing; %s", what, install)
	}
	t.Skipf("skipping: %s is missing; %s", what, install)
}

func liveTarget(t *testing.T) string {
	t.Helper()
	srv, err := target.Start(target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv.URL() + "/knob?delay=1ms"
}

func readRun(t *testing.T, path string) *result.Run {
	t.Helper()
	r, err := result.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRunHlogReadByHdrHistogramJS writes `run --hlog` in closed and open loop and reads the
// log with hdr-histogram-js: its total count is the run's requests (open loop: both the
// corrected and the tagged uncorrected histograms).
func TestRunHlogReadByHdrHistogramJS(t *testing.T) {
	_, err := exec.LookPath("node")
	_, err2 := os.Stat(filepath.Join(hlogJSDir, "node_modules", "hdr-histogram-js"))
	needTool(t, "node or hdr-histogram-js", err == nil && err2 == nil, "run `npm ci --prefix live/testdata/hlogjs` (.ci/run does)")
	url := liveTarget(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"closed", []string{"-n", "3000", "-c", "2", "-t", "2"}},
		{"open", []string{"-R", "400", "-d", "2s", "-c", "4", "-t", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			hlog, out := filepath.Join(dir, "run.hlog"), filepath.Join(dir, "run.json")
			code, _, stderr := runCLI(t, append([]string{"run", "-q", "--hlog", hlog, "-o", out}, append(tc.args, url)...)...)
			if code != 0 {
				t.Fatalf("run exited %d: %s", code, stderr)
			}
			s := readRun(t, out).Steps[0]
			cmd := exec.Command("node", filepath.Join(hlogJSDir, "count.js"), hlog)
			b, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("node count.js %s: %v\n%s", hlog, err, b)
			}
			var got struct{ Intervals, Corrected, Uncorrected int64 }
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("node count.js printed %q: %v", b, err)
			}
			wantUnc := int64(0)
			if tc.name == "open" {
				wantUnc = s.Requests
			}
			if got.Corrected != s.Requests || got.Uncorrected != wantUnc || got.Intervals < 1 {
				t.Errorf("hdr-histogram-js read %d intervals, %d corrected and %d uncorrected samples; the run has %d requests (want uncorrected %d)",
					got.Intervals, got.Corrected, got.Uncorrected, s.Requests, wantUnc)
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer a process writes while a test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// freeAddr returns a loopback address with a free port.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startRun runs `apiperf args...` in the background; wait returns its exit code and output.
func startRun(ctx context.Context, args ...string) (wait func() (int, string, string)) {
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, args, &stdout, &stderr) }()
	return func() (int, string, string) {
		code := <-done
		return code, stdout.String(), stderr.String()
	}
}

// waitHTTP polls url until it answers 200 or the time is up.
func waitHTTP(t *testing.T, url string, within time.Duration) []byte {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return b
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: no 200 within %v (last error %v)", url, within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestListenPrometheus runs an open-loop `run --listen` while a real Prometheus scrapes it
// every 500ms, checks /metrics with promtool during the run, and afterwards asks Prometheus
// for the request counter: it matches the run's total (apiperf waits for a last scrape).
// Twice at once: a default Prometheus (text format, classic histogram), and one with native
// histograms on, which scrapes the protobuf format; its native latency histogram must count
// every response too.
func TestListenPrometheus(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	promtool, err2 := exec.LookPath("promtool")
	needTool(t, "prometheus or promtool", err == nil && err2 == nil, "`apt-get install prometheus` (.ci/run does)")
	run := promRun{url: liveTarget(t), args: []string{"-R", "300", "-d", "4s", "-c", "4", "-t", "2"},
		want: []string{"apiperf_requests_total{", "apiperf_errors_total{", "apiperf_request_duration_seconds_bucket{",
			"apiperf_request_duration_uncorrected_seconds_bucket{", "apiperf_target_rate 300", "apiperf_schedule_lag_seconds",
			"apiperf_connections", "apiperf_in_flight", "apiperf_run_info{"}}
	for _, native := range []bool{false, true} {
		t.Run(map[bool]string{false: "text", true: "native"}[native], func(t *testing.T) {
			t.Parallel()
			listenPrometheus(t, prom, promtool, run, native)
		})
	}
}

// promRun is a run that listenPrometheus loads while Prometheus scrapes it: its target and
// load, the series /metrics must have during it, and a check of Prometheus's answers after it
// (query asks Prometheus for an expression at the moment the run ended).
type promRun struct {
	url   string
	args  []string
	want  []string
	check func(t *testing.T, query func(string) float64, r *result.Run, native bool)
}

func listenPrometheus(t *testing.T, prom, promtool string, run promRun, native bool) {
	listen, promAddr := freeAddr(t), freeAddr(t)
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 500ms\n  scrape_timeout: 400ms\nscrape_configs:\n  - job_name: apiperf\n    static_configs:\n      - targets: ['%s']\n", listen)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := []string{"--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"), "--web.listen-address=" + promAddr}
	if native {
		args = append(args, "--enable-feature=native-histograms")
	}
	cmd := exec.CommandContext(ctx, prom, args...)
	var plog lockedBuffer // Prometheus writes it while the test may print it
	cmd.Stdout, cmd.Stderr = &plog, &plog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	waitHTTP(t, "http://"+promAddr+"/-/ready", 20*time.Second)
	// Prometheus applies new targets after a few seconds: wait until it tries the address
	// (it fails, nothing listens yet) so the whole run is scraped.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if b := waitHTTP(t, "http://"+promAddr+"/api/v1/query?query=up", 5*time.Second); bytes.Contains(b, []byte(listen)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus did not start scraping %s within 20s:\n%s", listen, plog.String())
		}
	}

	out := filepath.Join(dir, "run.json")
	wait := startRun(ctx, append(append([]string{"run", "-q", "--listen", listen, "-o", out}, run.args...), run.url)...)
	time.Sleep(2500 * time.Millisecond)
	metrics := scrapeFor(t, "http://"+listen+"/metrics", run.want, 3*time.Second)
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = bytes.NewReader(metrics)
	if b, err := check.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s\n--- /metrics:\n%s", err, b, metrics)
	}
	for _, name := range run.want {
		if !bytes.Contains(metrics, []byte(name)) {
			t.Errorf("/metrics has no %q", name)
		}
	}
	code, _, stderr := wait()
	if code != 0 {
		t.Fatalf("run exited %d: %s", code, stderr)
	}
	rec := readRun(t, out)
	total := rec.Steps[0].Requests
	query := promQuery(t, promAddr, &plog)
	// Within one scrape interval (500ms at 300 req/s): apiperf waits for a last scrape, so
	// it is usually exact. Asked at that last scrape, Prometheus answers with it.
	scraped := query("sum(max_over_time(apiperf_requests_total[1m]))")
	if d := float64(total) - scraped; d < 0 || d > 150 {
		t.Errorf("Prometheus scraped apiperf_requests_total = %v, the run has %d requests", scraped, total)
	}
	t.Logf("Prometheus scraped %v requests; the run has %d", scraped, total)
	if native {
		counted := query("histogram_count(apiperf_request_duration_seconds)")
		if d := float64(total) - counted; d < 0 || d > 150 {
			t.Errorf("Prometheus's native histogram counts %v responses, the run has %d", counted, total)
		}
		if p99 := query("histogram_quantile(0.99, apiperf_request_duration_seconds)"); !(p99 > 0 && p99 < 2) {
			t.Errorf("p99 from the native histogram = %v s, want a latency of this run (0 to 2s)", p99)
		}
		t.Logf("the native histogram counts %v responses", counted)
	}
	if run.check != nil {
		run.check(t, query, rec, native)
	}
}

// scrapeFor gets url until its page has every one of want or the time is up (a busy machine
// starts the run late), and returns the last page.
func scrapeFor(t *testing.T, url string, want []string, within time.Duration) []byte {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		page := waitHTTP(t, url, 5*time.Second)
		missing := slices.ContainsFunc(want, func(w string) bool { return !bytes.Contains(page, []byte(w)) })
		if !missing || time.Now().After(deadline) {
			return page
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// promQuery returns a function that asks the Prometheus at addr for an expression's single
// value at its last successful scrape of apiperf (apiperf_run_info's last sample): after it,
// apiperf stopped answering and the series went stale. log is Prometheus's output, for errors.
func promQuery(t *testing.T, addr string, log *lockedBuffer) func(expr string) float64 {
	t.Helper()
	get := func(expr string, at float64, v any) {
		q := "http://" + addr + "/api/v1/query?query=" + neturl.QueryEscape(expr)
		if at > 0 {
			q += fmt.Sprintf("&time=%.3f", at)
		}
		if err := json.Unmarshal(waitHTTP(t, q, 5*time.Second), v); err != nil {
			t.Fatalf("querying Prometheus for %s: %v\n%s", expr, err, log.String())
		}
	}
	var raw struct {
		Data struct {
			Result []struct {
				Values [][2]any `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	get("apiperf_run_info[2m]", 0, &raw)
	if len(raw.Data.Result) != 1 || len(raw.Data.Result[0].Values) == 0 {
		t.Fatalf("Prometheus has no scrape of apiperf_run_info: %+v\n%s", raw, log.String())
	}
	vs := raw.Data.Result[0].Values
	last, _ := vs[len(vs)-1][0].(float64)
	return func(expr string) float64 {
		var resp struct {
			Data struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		get(expr, last, &resp)
		if len(resp.Data.Result) != 1 {
			t.Fatalf("querying Prometheus for %s at its last scrape: %+v\n%s", expr, resp, log.String())
		}
		var v float64
		fmt.Sscan(fmt.Sprint(resp.Data.Result[0].Value[1]), &v)
		return v
	}
}

// openLivePage opens the live page of the run listening on listen in headless Chromium after
// the run has measured for a while, lets it update once more and checks it logged no errors.
func openLivePage(t *testing.T, listen string, after time.Duration) *browsertest.Page {
	t.Helper()
	waitHTTP(t, "http://"+listen+"/live.json", 5*time.Second)
	time.Sleep(after)
	p := browsertest.OpenURL(t, "http://"+listen+"/")
	time.Sleep(1200 * time.Millisecond) // one more update
	if errs := p.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("the live page logged errors: %v", errs)
	}
	return p
}

// TestLivePageScreenshot opens the live page in headless Chromium during a sweep-free run and
// checks that it draws charts from the stream, loads nothing from elsewhere and logs no
// errors. With -update it saves the screenshot as docs/live-page.png.
func TestLivePageScreenshot(t *testing.T) {
	if browsertest.Find() == "" && os.Getenv("CI") == "" {
		t.Skip("skipping: no Chromium found")
	}
	url := liveTarget(t)
	listen := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	wait := startRun(ctx, "run", "-q", "--listen", listen, "-R", "200", "-d", "20s", "-c", "4", "-t", "2", url)
	p := openLivePage(t, listen, 3500*time.Millisecond)
	for _, r := range p.Requests() {
		if !strings.HasPrefix(r, "http://"+listen+"/") {
			t.Errorf("the live page requested %s: it must load nothing from elsewhere", r)
		}
	}
	var points int
	p.Eval(t, `window.apiperfLive ? window.apiperfLive.points.length : 0`, &points)
	if meta := p.Text(t, "#now-qps"); points < 3 || !strings.Contains(meta, "req/s") {
		t.Errorf("live page: %d points, current rate %q; want at least 3 points and a rate", points, meta)
	}
	img := p.Screenshot(t, "body")
	if ink, _ := browsertest.Ink(img); ink < 0.02 {
		t.Errorf("the screenshot is nearly blank (ink %.3f)", ink)
	}
	if golden.Updating() {
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("../../docs/live-page.png", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	if code, _, stderr := wait(); code != 0 && code != 1 {
		t.Errorf("run exited %d: %s", code, stderr)
	}
}

// hlogCount is the corrected sample count of an interval log, as hdrhistogram-go reads it.
func hlogCount(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := hdr.NewHistogramLogReader(f)
	var n int64
	for {
		h, err := rd.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		if h == nil {
			return n
		}
		if h.Tag() == "" {
			n += h.TotalCount()
		}
	}
}

// TestSweepLiveAndHlogPerLevel: a sweep with --listen serves the level it runs, and its run
// directory keeps one interval log per level whose count is the level's requests.
func TestSweepLiveAndHlogPerLevel(t *testing.T) {
	url := liveTarget(t)
	listen, dir := freeAddr(t), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	wait := startRun(ctx, "sweep", "-q", "--levels", "2,4", "-d", "1500ms", "--warmup", "0", "--dir", dir, "--name", "s",
		"--no-report", "--listen", listen, url)
	// /metrics is served from the start; the sweep's plan is in it once its first level began
	// (on a busy machine that may be a few scrapes later).
	plan := []string{"apiperf_levels 2", `apiperf_run_info{command="sweep"`}
	metrics := scrapeFor(t, "http://"+listen+"/metrics", plan, 10*time.Second)
	if slices.ContainsFunc(plan, func(w string) bool { return !bytes.Contains(metrics, []byte(w)) }) {
		t.Errorf("/metrics during the sweep lacks apiperf_levels 2 or the sweep's run_info:\n%s", metrics)
	}
	if code, _, stderr := wait(); code != 0 {
		t.Fatalf("sweep exited %d: %s", code, stderr)
	}
	r := readRun(t, filepath.Join(dir, "s", "run.json"))
	if len(r.Steps) != 2 {
		t.Fatalf("sweep measured %d levels, want 2", len(r.Steps))
	}
	for _, s := range r.Steps {
		if got := hlogCount(t, filepath.Join(dir, "s", "hlog", s.Label+".hlog")); got != s.Requests {
			t.Errorf("hlog/%s.hlog holds %d samples, the level has %d requests", s.Label, got, s.Requests)
		}
	}
}
