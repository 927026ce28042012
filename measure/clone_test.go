package measure

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
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

// histograms fills and mutates a step's histograms, which keep their samples unexported.
func histograms(v reflect.Value, seed int) bool {
	if v.Type() != reflect.TypeFor[*Histogram]() {
		return false
	}
	if v.IsNil() {
		v.Set(reflect.ValueOf(NewHistogram()))
	}
	v.Interface().(*Histogram).RecordN(time.Duration(seed+1)*time.Millisecond, int64(seed+1))
	return true
}

// filledStep is a step with every field set (by reflection, so a field added later is set
// too); the same seed makes a deeply equal step.
func filledStep(seed int) *Step {
	s := &Step{}
	testenv.Fill(s, seed, histograms)
	s.Label, s.Rep = "c=2", 0
	for i := range s.ServerTiming.Metrics { // derived from the histogram, as merging and cloning make it
		s.ServerTiming.Metrics[i].Summary = Summarize(s.ServerTiming.Metrics[i].Histogram)
	}
	return s
}

// changed names the fields of got that are not deeply equal to want's.
func changed(got, want *Step) []string {
	var out []string
	g, w := reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()
	for i := range g.NumField() {
		if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
			out = append(out, g.Type().Field(i).Name)
		}
	}
	return out
}

// TestMergeNeverChangesItsInputs: merging a step into a clone of another changes neither,
// and the merged clone shares nothing with them (changing all of it leaves both as they were).
func TestMergeNeverChangesItsInputs(t *testing.T) {
	a, b := filledStep(1), filledStep(40)
	c := a.Clone()
	if !reflect.DeepEqual(c, filledStep(1)) {
		t.Fatalf("Clone() of a filled step differs from it: fields %v", changed(c, filledStep(1)))
	}
	c.Merge(b)
	if c.Attempts != a.Attempts+b.Attempts {
		t.Fatalf("merged attempts %d, want %d + %d", c.Attempts, a.Attempts, b.Attempts)
	}
	if !reflect.DeepEqual(a, filledStep(1)) {
		t.Errorf("merging into a.Clone() changed a: fields %v", changed(a, filledStep(1)))
	}
	if !reflect.DeepEqual(b, filledStep(40)) {
		t.Errorf("c.Merge(b) changed b: fields %v", changed(b, filledStep(40)))
	}
	testenv.Mutate(c, histograms)
	if !reflect.DeepEqual(a, filledStep(1)) {
		t.Errorf("changing the merged clone changed a (memory shared with Clone's copy): fields %v", changed(a, filledStep(1)))
	}
	if !reflect.DeepEqual(b, filledStep(40)) {
		t.Errorf("changing the merged step changed b (memory shared by Merge): fields %v", changed(b, filledStep(40)))
	}
}
