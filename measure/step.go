package measure

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Class is the outcome of one request attempt.
type Class uint8

// Outcome classes. Response means a complete, valid HTTP response (any status).
const (
	Response Class = iota
	ConnectError
	ReadError
	WriteError
	TimeoutError
	ProtocolError
	numClasses
)

var classNames = [numClasses]string{"response", "connect", "read", "write", "timeout", "protocol"}

func (c Class) String() string {
	if c < numClasses {
		return classNames[c]
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// Errors counts failed attempts by class. Status counts complete responses whose code was
// outside the expected set.
type Errors struct {
	Connect  int64 `json:"connect"`
	Read     int64 `json:"read"`
	Write    int64 `json:"write"`
	Timeout  int64 `json:"timeout"`
	Status   int64 `json:"status"`
	Protocol int64 `json:"protocol"`
}

// Socket is the sum of wrk's socket error classes (connect, read, write, timeout).
func (e Errors) Socket() int64 { return e.Connect + e.Read + e.Write + e.Timeout }

// String lists the classes with failures, e.g. "read 2, timeout 3"; "" when there are none.
func (e Errors) String() string {
	var parts []string
	for _, c := range []struct {
		name string
		n    int64
	}{{"connect", e.Connect}, {"read", e.Read}, {"write", e.Write}, {"timeout", e.Timeout}, {"status", e.Status}, {"protocol", e.Protocol}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c.name, c.n))
		}
	}
	return strings.Join(parts, ", ")
}

// Total is every failed attempt, status errors included.
func (e Errors) Total() int64 { return e.Socket() + e.Status + e.Protocol }

// Add adds o's counts to e.
func (e *Errors) Add(o Errors) {
	e.Connect += o.Connect
	e.Read += o.Read
	e.Write += o.Write
	e.Timeout += o.Timeout
	e.Status += o.Status
	e.Protocol += o.Protocol
}

// Second is one interval of the timeline (a second unless the step says otherwise), counted
// by completion time: the summary of an Interval that a run keeps.
type Second struct {
	T        int     `json:"t"` // intervals (seconds) since the step started
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	Bytes    int64   `json:"bytes"`
	P50      float64 `json:"p50_ms,omitempty"` // corrected latency of the interval's responses
	P99      float64 `json:"p99_ms,omitempty"`
	Max      float64 `json:"max_ms,omitempty"`
}

// Summary is a latency histogram's headline numbers in milliseconds, for readers of the
// JSON who do not decode histograms.
type Summary struct {
	Count int64   `json:"count"`
	Min   float64 `json:"min_ms"`
	Mean  float64 `json:"mean_ms"`
	Stdev float64 `json:"stdev_ms"`
	Max   float64 `json:"max_ms"`
	P50   float64 `json:"p50_ms"`
	P75   float64 `json:"p75_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p99_9_ms"`
	P9999 float64 `json:"p99_99_ms"`
}

// Summarize computes the headline numbers of h.
func Summarize(h *Histogram) Summary {
	if h == nil || h.Count() == 0 {
		return Summary{}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return Summary{
		Count: h.Count(), Min: ms(h.Min()), Mean: ms(h.Mean()), Stdev: ms(h.Stdev()), Max: ms(h.Max()),
		P50: ms(h.Percentile(50)), P75: ms(h.Percentile(75)), P90: ms(h.Percentile(90)),
		P99: ms(h.Percentile(99)), P999: ms(h.Percentile(99.9)), P9999: ms(h.Percentile(99.99)),
	}
}

// RateStats describes per-thread requests per second sampled each second (wrk's Req/Sec row).
type RateStats struct {
	Mean        float64 `json:"mean"`
	Stdev       float64 `json:"stdev"`
	Max         float64 `json:"max"`
	WithinStdev float64 `json:"within_stdev_pct"`
}

// OpenLoop holds what only an open-loop (constant rate) step has.
type OpenLoop struct {
	TargetRate  float64  `json:"target_rate"`
	Scheduled   int64    `json:"scheduled"`      // requests that came due in the window
	Sent        int64    `json:"sent,omitempty"` // attempts started in the window (the achieved rate's count)
	LateSends   int64    `json:"late_sends"`     // sent more than 1 ms after they were due
	MaxLag      Duration `json:"max_lag"`        // largest delay between due and actual send
	Connections int      `json:"connections"`    // connections opened in all (pool growth)
}

// Generator is apiperf's own use of the machine during a step (setup included): whether the
// generator, and not only the target, was short of CPU.
type Generator struct {
	CPU         Duration `json:"cpu"`          // user + system CPU time of apiperf
	Wall        Duration `json:"wall"`         // over this much time
	Cores       float64  `json:"cores"`        // the cores apiperf may use: GOMAXPROCS, within its affinity and cgroup CPU limit
	MachineCPUs int      `json:"machine_cpus"` // CPUs of the machine
	// RunWait is how long apiperf's threads waited on a run queue for a CPU (CPU it wanted
	// and did not get); 0 unknown.
	RunWait Duration `json:"run_wait,omitempty"`
	// SchedSlowPct is the share of goroutine wake-ups that waited over 1 ms to run.
	SchedSlowPct float64 `json:"sched_slow_pct"`
}

// CPUCores is the mean CPU apiperf used, in cores.
func (g *Generator) CPUCores() float64 {
	if g == nil || g.Wall <= 0 {
		return 0
	}
	return g.CPU.Duration().Seconds() / g.Wall.Duration().Seconds()
}

// RunWaitCores is how long apiperf's threads waited for a CPU per second, in cores.
func (g *Generator) RunWaitCores() float64 {
	if g == nil || g.Wall <= 0 {
		return 0
	}
	return g.RunWait.Duration().Seconds() / g.Wall.Duration().Seconds()
}

// Step is the measured record of one load step (one repetition of a level): a plain `run`
// has one, a sweep one per level and repetition. The step about to run is sweep.StepInfo
// (live.Phase on the live view); what is captured beside it is a profcap.StepCapture.
type Step struct {
	Label       string    `json:"label"`         // e.g. "c=200" or "rate=1000/s"
	Rep         int       `json:"rep,omitempty"` // repetition of the same level (--count), from 0
	Concurrency int       `json:"concurrency,omitempty"`
	Start       time.Time `json:"start"`
	// Elapsed is the measured window: from the first send (after any warmup) to when sending
	// stopped (the duration, or an interruption), or to the last completion when every request
	// was done before that (-n, or every script thread stopped without a duration).
	Elapsed Duration `json:"elapsed"`
	// Drained is what completed after the window: requests in flight when it closed, waited
	// for up to the timeout so their latency is recorded. They are in every count and
	// histogram but not in the rate (QPS, InWindow).
	Drained Drained `json:"drained,omitzero"`

	Attempts  int64           `json:"attempts"`  // requests attempted, including failed ones
	Requests  int64           `json:"requests"`  // complete responses, any status (wrk's "requests")
	Successes int64           `json:"successes"` // responses with an expected status
	Bytes     int64           `json:"bytes"`     // bytes read, headers included
	Errors    Errors          `json:"errors"`
	Status    map[int]int64   `json:"status"`
	Endpoints []EndpointStats `json:"endpoints,omitempty"`

	// Latency is from send (open loop: from when the request was due) to the last byte, of
	// every complete response. Uncorrected (open loop only) is from the actual send.
	// Attempts also holds timed-out attempts, at the time they were abandoned.
	Latency            *Histogram `json:"latency"`
	LatencySummary     Summary    `json:"latency_summary"`
	Uncorrected        *Histogram `json:"uncorrected,omitempty"`
	UncorrectedSummary *Summary   `json:"uncorrected_summary,omitempty"`
	AllAttempts        *Histogram `json:"all_attempts"`
	// SendLag (open loop) is, per complete response, the delay from its due time to its
	// actual send: the generator's share of the corrected latency (timers, CPU, busy connections).
	SendLag *Histogram `json:"send_lag,omitempty"`

	// Exemplars are single requests kept whole: the slowest and one per latency band; nil in
	// runs older than them.
	Exemplars *Exemplars `json:"exemplars,omitempty"`
	// ServerTiming is what the responses' Server-Timing headers said, nil when none had any.
	ServerTiming *ServerTiming `json:"server_timing,omitempty"`

	// Connects counts the connections opened during the step and ConnectTime their total
	// dial time (TCP and TLS handshakes); without keep-alive there is one per request.
	Connects    int64    `json:"connects,omitempty"`
	ConnectTime Duration `json:"connect_time,omitempty"`

	Timeline  []Second  `json:"timeline"`
	Interval  Duration  `json:"interval,omitempty"` // length of a timeline entry; 0: one second
	ThreadRPS RateStats `json:"thread_rps"`
	Threads   int       `json:"threads"`
	Open      *OpenLoop `json:"open_loop,omitempty"`
	// Generator is apiperf's own use of the machine during the step; nil in old runs.
	Generator *Generator `json:"generator,omitempty"`
	HTTP2     *HTTP2     `json:"http2,omitempty"` // nil: HTTP/1.1
	GRPC      *GRPC      `json:"grpc,omitempty"`  // nil: not gRPC; else Status holds gRPC codes
	// Streams is what streamed responses (gRPC server streams, SSE) measured; nil: none.
	Streams *Streams `json:"streams,omitempty"`
	// TargetCPU is the CPU time the target process used while the step ran, when the
	// runner could watch it (apiperf ab --pid-a/--pid-b); 0: not measured.
	TargetCPU Duration `json:"target_cpu,omitempty"`
	// Interrupted says the step was cut short (Ctrl-C, SIGTERM): it covers less than was
	// planned, so a sweep marks its level partial and never makes it the peak or the knee.
	Interrupted bool `json:"interrupted,omitempty"`
	// GeneratorLimit is the limit of apiperf's own machine that kept the step from opening
	// its connections (local ports, file descriptors); nil when none was hit.
	GeneratorLimit *GeneratorLimit `json:"generator_limit,omitempty"`
	// Failure is why connections failed (unreachable target, TLS), also one of Warnings;
	// nil when they did not. Err returns it as an error.
	Failure  *Failure `json:"failure,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// EndpointStats is the share of a step that went to one endpoint of a scenario mix.
type EndpointStats struct {
	Name           string        `json:"name"`
	Requests       int64         `json:"requests"`
	Drained        int64         `json:"drained,omitempty"` // of Requests, those completed after the window
	Successes      int64         `json:"successes"`
	Errors         Errors        `json:"errors"`
	Status         map[int]int64 `json:"status"`
	Latency        *Histogram    `json:"latency"`
	LatencySummary Summary       `json:"latency_summary"`
}

// Drained counts the attempts that ended after a step's measured window.
type Drained struct {
	Attempts int64 `json:"attempts"` // every attempt that ended after the window, failed ones included
	Requests int64 `json:"requests"` // of them, complete responses
	Bytes    int64 `json:"bytes"`
}

func (d *Drained) add(o Drained) {
	d.Attempts += o.Attempts
	d.Requests += o.Requests
	d.Bytes += o.Bytes
}

// InWindow is the number of complete responses that ended inside the measured window (wrk's
// "N requests in Xs").
func (s *Step) InWindow() int64 { return s.Requests - s.Drained.Requests }

// QPS is responses completed inside the measured window per second of it.
func (s *Step) QPS() float64 { return s.perSecond(s.InWindow()) }

// AttemptRate is attempts that ended inside the measured window per second of it (open loop:
// the rate the generator achieved, failed attempts included).
func (s *Step) AttemptRate() float64 { return s.perSecond(s.Attempts - s.Drained.Attempts) }

// SendRate is, in an open loop, the rate the generator achieved: attempts started inside the
// measured window per second of it, whether or not they ended in it (a slow service answers
// after the window what was sent in time), as wrk2's users read it. A step recorded without
// that count (before it was kept) gives AttemptRate.
func (s *Step) SendRate() float64 {
	if s.Open == nil || s.Open.Sent == 0 {
		return s.AttemptRate()
	}
	return s.perSecond(s.Open.Sent)
}

// ByteRate is bytes read inside the measured window per second of it.
func (s *Step) ByteRate() float64 { return s.perSecond(s.Bytes - s.Drained.Bytes) }

func (s *Step) perSecond(n int64) float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(n) / time.Duration(s.Elapsed).Seconds()
}

// ConnectMean is the mean time to open a connection, 0 when none was opened.
func (s *Step) ConnectMean() time.Duration {
	if s.Connects == 0 {
		return 0
	}
	return time.Duration(s.ConnectTime) / time.Duration(s.Connects)
}

// SuccessRate is successful responses / attempted requests, in percent (0 when nothing was attempted).
func (s *Step) SuccessRate() float64 {
	if s.Attempts == 0 {
		return 0
	}
	return 100 * float64(s.Successes) / float64(s.Attempts)
}

// ClassicSuccessRate is the classic sweep script's figure: requests minus socket errors over
// requests, in percent; non-2xx responses count as successes there.
func (s *Step) ClassicSuccessRate() float64 {
	if s.Requests == 0 {
		return 0
	}
	return 100 * float64(s.Requests-s.Errors.Socket()) / float64(s.Requests)
}

// Finish recomputes the derived summaries after the histograms changed.
func (s *Step) Finish() {
	s.LatencySummary = Summarize(s.Latency)
	if s.Uncorrected != nil {
		u := Summarize(s.Uncorrected)
		s.UncorrectedSummary = &u
	}
	if s.Exemplars != nil {
		s.Exemplars.pick(s.Latency)
	}
}

// Duration is a time.Duration that reads and writes JSON as a string like "1.5s".
type Duration time.Duration

// MarshalJSON writes d as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a Go duration string or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err2 := json.Unmarshal(b, &n); err2 != nil {
			return fmt.Errorf("duration: want a string like \"1.5s\": %w", err)
		}
		*d = Duration(n)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	*d = Duration(v)
	return nil
}

func (d Duration) String() string { return time.Duration(d).String() }

// Duration returns d as a time.Duration.
func (d Duration) Duration() time.Duration { return time.Duration(d) }
