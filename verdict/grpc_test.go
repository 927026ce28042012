package verdict

import (
	"strings"
	"testing"

	"github.com/apiperf/apiperf/measure"
)

// TestErrorsGRPCStatus: a gRPC target's failing calls are named by their gRPC codes, OK
// left out; an HTTP target's by their statuses.
func TestErrorsGRPCStatus(t *testing.T) {
	levels := with(closed([3]float64{1, 500, 2}, [3]float64{2, 1000, 2}), func(_ int, l *Level) {
		l.Errors, l.Attempts, l.Status = measure.Errors{Status: 100}, 1000, map[int]int64{0: 900, 14: 100}
	})
	c := claimOf(Input{Levels: levels, Peak: 1, GRPC: true}, ErrorsStart)
	if c == nil || !strings.Contains(text(c), "gRPC status: UNAVAILABLE=100") || strings.Contains(text(c), "OK=") {
		t.Errorf("gRPC errors claim %v; want the evidence gRPC status: UNAVAILABLE=100", c)
	}
	c = claimOf(Input{Levels: levels, Peak: 1}, ErrorsStart)
	if c == nil || !strings.Contains(text(c), "status codes: 0 x900, 14 x100") {
		t.Errorf("HTTP errors claim %v; want the statuses by number", c)
	}
}
