package target

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestDemoTiming(t *testing.T) {
	s := start(t, Config{Demo: true, Log: io.Discard})
	var want []string
	for i := range 2*TimingSlowEvery + 1 {
		req, _ := http.NewRequest("GET", s.URL()+"/demo/timing", nil)
		id := fmt.Sprintf("%032x", i+1)
		req.Header.Set("traceparent", "00-"+id+"-00f067aa0ba902b7-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		st := strings.Join(resp.Header.Values("Server-Timing"), " | ")
		slow := i%TimingSlowEvery == 0
		if slow {
			want = append(want, id)
		}
		if slow != strings.Contains(st, "db;dur=60;") || !strings.Contains(st, "app;dur=0.5") {
			t.Fatalf("request %d: Server-Timing %q, slow %v", i, st, slow)
		}
	}
	if got := s.SlowTraces(); !reflect.DeepEqual(got, want) {
		t.Errorf("SlowTraces() = %v, want %v", got, want)
	}
	code, _, body := get(t, s.URL()+"/demo/timing/slow")
	var doc struct {
		Requests int64    `json:"requests"`
		Slow     []string `json:"slow_trace_ids"`
	}
	if code != 200 || json.Unmarshal(body, &doc) != nil || doc.Requests != 2*TimingSlowEvery+1 || !reflect.DeepEqual(doc.Slow, want) {
		t.Errorf("GET /demo/timing/slow = %d %s, want %d requests and %v", code, body, 2*TimingSlowEvery+1, want)
	}
}
