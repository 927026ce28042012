package measure

import (
	"encoding/json"
	"testing"
	"time"
)

// fullStep has every pointer, map and slice field of a Step set.
func fullStep(ms time.Duration) *Step {
	h := func() *Histogram { x := NewHistogram(); x.RecordN(ms*time.Millisecond, 10); return x }
	s := &Step{Label: "c=2", Concurrency: 2, Elapsed: Duration(time.Second), Attempts: 10, Requests: 10, Successes: 10,
		Status: map[int]int64{200: 10}, Latency: h(), Uncorrected: h(), AllAttempts: h(), SendLag: h(),
		Endpoints: []EndpointStats{{Name: "a", Requests: 10, Status: map[int]int64{200: 10}, Latency: h()}},
		Timeline:  []Second{{Requests: 10}}, Warnings: []string{"w"},
		Open: &OpenLoop{Scheduled: 10}, Generator: &Generator{CPU: Duration(time.Millisecond)},
		HTTP2:          &HTTP2{Protocol: "h2c", GoAways: map[string]int64{"NO_ERROR": 1}, Resets: map[string]int64{"CANCEL": 1}},
		GeneratorLimit: &GeneratorLimit{Errno: "EMFILE", Connections: 1, Wanted: 2}, Failure: &Failure{Kind: "tls", Reason: "r"},
		UncorrectedSummary: &Summary{}, GRPC: &GRPC{Method: "/p.S/M", Messages: 10}}
	s.Finish()
	return s
}

// TestCloneIsDeep: merging another step into a clone leaves the original as it was.
func TestCloneIsDeep(t *testing.T) {
	orig := fullStep(5)
	before, err := json.Marshal(orig)
	if err != nil {
		t.Fatal(err)
	}
	c := orig.Clone()
	c.Merge(fullStep(9))
	c.Status[500]++
	c.HTTP2.GoAways["X"]++
	c.GRPC.Messages++
	c.Endpoints[0].Status[404]++
	c.Timeline[0].Requests++
	c.Warnings[0] = "changed"
	after, err := json.Marshal(orig)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Errorf("merging into a clone changed the original:\nbefore %s\nafter  %s", before, after)
	}
}
