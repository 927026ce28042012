package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/golden"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/store"
	"github.com/apiperf/apiperf/sweep"
)

// The history list a newcomer reads to pick a baseline id: figures with units and a sensible
// precision, "-" (not NaN) for a run without levels.
func TestHistoryListGolden(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	runs := []store.Entry{
		{ID: 1, Kind: "run", Method: "GET", URL: "http://127.0.0.1:8080/api", Start: t0,
			Labels: map[string]string{"branch": "main", "commit": "0123456789abcdef0123"},
			Levels: []sweep.Level{{Label: "c=10", Reps: 5, QPS: 9838.600000000001, Responses: 49193, Success: 99.99796747, P99: measure.Duration(1609999 * time.Nanosecond)}}},
		// A capacity search stands for its answer (93.8/s), not its last, failing probe.
		{ID: 2, Kind: "capacity", Method: "POST", URL: "http://127.0.0.1:8081/orders", Start: t0.Add(time.Hour), Answer: 93.8,
			Levels: []sweep.Level{{Label: "rate=93.8/s", Value: 93.8, Reps: 1, QPS: 93.80000000000001, Responses: 281, Success: 100, P99: measure.Duration(41 * time.Millisecond)},
				{Label: "rate=187.5/s", Value: 187.5, Reps: 2, QPS: 120, Responses: 700, Success: 91, P99: measure.Duration(2 * time.Second)}}},
		{ID: 3, Kind: "sweep", Method: "GET", URL: "http://127.0.0.1:8080/api", Start: t0.Add(2 * time.Hour), Labels: map[string]string{"side": "base"}},
		// An HTTP/2 run says so beside its URL.
		{ID: 4, Kind: "run", Method: "GET", URL: "https://127.0.0.1:8443/api", Start: t0.Add(3 * time.Hour), HTTP2: true,
			Levels: []sweep.Level{{Label: "c=4", Reps: 1, QPS: 20000, Responses: 60000, Success: 100, P99: measure.Duration(900 * time.Microsecond)}}},
		// a last level that hit apiperf's own port limit says so
		{ID: 5, Kind: "sweep", Method: "GET", URL: "http://127.0.0.1:8080/api", Start: t0.Add(4 * time.Hour),
			Levels: []sweep.Level{{Label: "c=1500", Reps: 1, QPS: 9800, Responses: 98000, Success: 100, P99: measure.Duration(6 * time.Millisecond),
				GeneratorLimit: &measure.GeneratorLimit{Errno: "EADDRNOTAVAIL", Resource: "local ports", Connections: 1000, Wanted: 1500}}}},
	}
	var b bytes.Buffer
	HistoryList(&b, runs)
	golden.Check(t, "history_list.golden.txt", b.Bytes())
}

// A URL longer than the column (or a long level label) widens its column for every row:
// the figures and labels of each row stay under their headers.
func TestHistoryListLongURL(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	lv := []sweep.Level{{Label: "rate=12500.5/s", Reps: 10, QPS: 12500, Responses: 125000, Success: 100, P99: measure.Duration(3 * time.Millisecond)}}
	runs := []store.Entry{
		{ID: 1, Kind: "run", Method: "GET", URL: "http://127.0.0.1:8080/api", Start: t0, Labels: map[string]string{"row": "1"}, Levels: lv[:0]},
		{ID: 2, Kind: "sweep", Method: "GET", URL: "http://127.0.0.1:8080/api/v2/organisations/42/projects/7/members?page=3&per_page=100", Start: t0,
			Labels: map[string]string{"row": "2"}, Levels: lv},
	}
	var b bytes.Buffer
	HistoryList(&b, runs)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	labels, qps := strings.Index(lines[0], "LABELS"), strings.Index(lines[0], "REQ/S")+len("REQ/S")
	for _, l := range lines[1:] {
		if strings.Index(l, "row=") != labels {
			t.Errorf("row %q: labels at column %d, header LABELS at %d:\n%s", l, strings.Index(l, "row="), labels, b.String())
		}
	}
	if got := strings.Index(lines[2], "12500.00") + len("12500.00"); got != qps {
		t.Errorf("REQ/S of the long row ends at column %d, its header at %d:\n%s", got, qps, b.String())
	}
}
