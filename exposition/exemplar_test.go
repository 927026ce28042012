package exposition

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// TestExemplarsOpenMetrics writes a histogram with an exemplar as OpenMetrics text and as
// protobuf, and checks both against the Prometheus client library: its OpenMetrics encoder
// writes the same bucket line for the same exemplar, and its decoder reads ours back.
func TestExemplarsOpenMetrics(t *testing.T) {
	at := time.Unix(1700000000, 250_000_000)
	ours := NewNativeHistogram([]float64{0.01, 0.1})
	ours.ObserveN(0.005, 3)
	ours.ObserveN(0.067, 1)
	ours.SetExemplar(Exemplar{Labels: []string{"trace_id", "4bf92f3577b34da6a3ce929d0e0e4736"}, Value: 0.067, Time: at})

	lib := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "x_seconds", Help: "x", Buckets: []float64{0.01, 0.1}})
	lib.Observe(0.005)
	lib.Observe(0.005)
	lib.Observe(0.005)
	lib.(prometheus.ExemplarObserver).ObserveWithExemplar(0.067, prometheus.Labels{"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"})
	var m dto.Metric
	if err := lib.Write(&m); err != nil {
		t.Fatal(err)
	}
	m.Histogram.Bucket[1].Exemplar.Timestamp.Seconds, m.Histogram.Bucket[1].Exemplar.Timestamp.Nanos = at.Unix(), int32(at.Nanosecond())
	typ := dto.MetricType_HISTOGRAM
	var want bytes.Buffer
	if _, err := expfmt.MetricFamilyToOpenMetrics(&want, &dto.MetricFamily{Name: new("x_seconds"), Help: new("x"), Type: &typ, Metric: []*dto.Metric{&m}}); err != nil {
		t.Fatal(err)
	}
	p := NewOpenMetricsPage()
	p.Histogram("x_seconds", "x", ours)
	p.Metric("y_total", "y", "counter", 2)
	got := string(p.Bytes())
	wantLine := ""
	for _, l := range strings.Split(want.String(), "\n") {
		if strings.HasPrefix(l, `x_seconds_bucket{le="0.1"}`) {
			wantLine = l
		}
	}
	if wantLine == "" || !strings.Contains(got, wantLine+"\n") {
		t.Errorf("OpenMetrics page lacks the library's bucket line %q:\n%s", wantLine, got)
	}
	for _, want := range []string{"# TYPE y counter\ny_total 2\n", "# EOF\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("OpenMetrics page lacks %q:\n%s", want, got)
		}
	}
	var plain Page
	plain.Histogram("x_seconds", "x", ours)
	if strings.Contains(string(plain.Bytes()), "#  {") || strings.Contains(string(plain.Bytes()), "trace_id") {
		t.Errorf("the 0.0.4 text format has no exemplars, got:\n%s", plain.Bytes())
	}

	pp := NewProtoPage()
	pp.Histogram("x_seconds", "x", ours)
	h := decodeProto(t, pp.Bytes())["x_seconds"].Metric[0].GetHistogram()
	for name, e := range map[string]*dto.Exemplar{"bucket": h.GetBucket()[1].GetExemplar(), "native": h.GetExemplars()[0]} {
		if e.GetValue() != 0.067 || e.GetLabel()[0].GetValue() != "4bf92f3577b34da6a3ce929d0e0e4736" || !e.GetTimestamp().AsTime().Equal(at) {
			t.Errorf("protobuf %s exemplar = %v, want the trace id, 0.067 at %v", name, e, at)
		}
	}
}
