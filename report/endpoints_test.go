package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// TestEndpointSections checks the per-endpoint table in report.html and the text summary
// agree and escape what the user wrote.
func TestEndpointSections(t *testing.T) {
	r := textRun()
	s := r.Last()
	h := measure.NewHistogram()
	h.RecordN(2*time.Millisecond, 300)
	s.Requests = 400
	s.Endpoints = []measure.EndpointStats{
		{Name: "GET /users", Requests: 300, Successes: 300, Status: map[int]int64{200: 300}, Latency: h},
		{Name: "<script>alert(1)</script>", Requests: 100, Successes: 90, Errors: measure.Errors{Status: 10}, Status: map[int]int64{200: 90, 500: 10}, Latency: h.Clone()},
	}
	var page bytes.Buffer
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	if strings.Contains(html, "<script>alert(1)") || !strings.Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the endpoint name is not escaped in report.html")
	}
	if !strings.Contains(html, `<table class="endpoints">`) || !strings.Contains(html, "<td>GET /users</td><td>30.00</td><td>75.0%</td>") {
		t.Errorf("report.html lacks the endpoint table with 30.00 req/s and a 75%% share for GET /users")
	}
	var text bytes.Buffer
	Endpoints(&text, r, s)
	if !strings.Contains(text.String(), "GET /users") || !strings.Contains(text.String(), "200=90 500=10") {
		t.Errorf("text endpoints table:\n%s", &text)
	}
}
