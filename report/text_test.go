package report

import (
	"bytes"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/golden"
	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
)

func TestWrkUnits(t *testing.T) {
	cases := []struct {
		got, want string
	}{
		{FormatTimeUS(849), "849.00us"},     // below 85% of a ms stays in us
		{FormatTimeUS(850), "0.85ms"},       // from 850 us wrk switches to ms
		{FormatTimeUS(1234.5), "1.23ms"},    // two decimals
		{FormatTimeUS(999999), "1000.00ms"}, // ms is the last step below 1 s
		{FormatTimeUS(2e6), "2.00s"},        // seconds from 1 s
		{FormatTimeUS(90e6), "1.50m"},       // minutes past 51 s
		{FormatBinary(870), "870.00"},       // bytes print without a unit below 870.4
		{FormatBinary(18.16 * 1024 * 1024), "18.16M"},
		{FormatMetric(24030), "24.03k"},
		{FormatMetric(999), "1.00k"}, // wrk steps up from 85% of the next unit
		{FormatMetric(849), "849.00"},
		{FormatTestDuration(10 * time.Second), "10s"},
		{FormatTestDuration(5 * time.Minute), "5m"},
		{units("1.04ms", 8), "  1.04ms"}, // unit of two letters: no padding after
		{units("24.03k", 8), " 24.03k "}, // one letter: one space after, 8 wide in all
		{units("84.23", 8), " 84.23  "},  // no unit: two spaces after
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: got %q, want %q", i, c.got, c.want)
		}
	}
}

// textRun is a fixed closed-loop run with socket errors and 404s (a fixture, not a measurement).
func textRun() *result.Run {
	s := synthStep(50, 48061.45, time.Millisecond, measure.Errors{Connect: 1, Read: 2, Timeout: 3}, 70)
	s.Bytes = 19040000
	s.ThreadRPS = measure.RateStats{Mean: 24030, Stdev: 3990, Max: 27790, WithinStdev: 66.67}
	return &result.Run{
		Version: result.Version, Tool: "apiperf test", Kind: result.KindRun,
		Command:  []string{"apiperf", "run", "-c50", "-d10s", "-H", "Authorization: REDACTED", "http://127.0.0.1:8080/healthz"},
		Scenario: scenario.Scenario{URL: "http://127.0.0.1:8080/healthz", Headers: []scenario.Header{{Name: "Authorization", Value: scenario.Redacted}}},
		Load:     load.Config{Connections: 50, Threads: 2, Duration: measure.Duration(10 * time.Second), Timeout: measure.Duration(2 * time.Second)},
		Start:    time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		End:      time.Date(2026, 1, 2, 3, 4, 15, 0, time.UTC),
		Steps:    []*measure.Step{s},
	}
}

func TestTextGolden(t *testing.T) {
	r := textRun()
	var b bytes.Buffer
	Header(&b, r)
	Text(&b, r, r.Last(), TextOptions{Latency: true})
	golden.Check(t, "text_closed.golden", b.Bytes())

	open := textRun()
	s := open.Last()
	s.Uncorrected = s.Latency.Clone()
	s.Latency.RecordN(500*time.Millisecond, 2000) // a stall only the corrected view sees
	s.Open = &measure.OpenLoop{TargetRate: 50000, Scheduled: 482614, LateSends: 12, MaxLag: measure.Duration(1500 * time.Microsecond), Connections: 60}
	s.Finish()
	open.Load.Rate = 50000
	b.Reset()
	Header(&b, open)
	Text(&b, open, s, TextOptions{Uncorrected: true})
	golden.Check(t, "text_open.golden", b.Bytes())
}

func TestRunJSONGolden(t *testing.T) {
	b, err := textRun().Encode()
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "run.golden.json", b)
	back, err := result.Decode("run.golden.json", b)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := back.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, b2) {
		t.Errorf("run.json does not round-trip:\n%s", golden.Diff(string(b), string(b2)))
	}
	if bytes.Contains(b, []byte("secret")) {
		t.Error("run.json contains a secret")
	}
}
