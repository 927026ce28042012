package exposition

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// decodeProto reads a delimited protobuf page with the Prometheus library's own decoder,
// which this package does not use: an independent reading of what we wrote.
func decodeProto(t *testing.T, b []byte) map[string]*dto.MetricFamily {
	t.Helper()
	dec := expfmt.NewDecoder(bytes.NewReader(b), expfmt.NewFormat(expfmt.TypeProtoDelim))
	out := map[string]*dto.MetricFamily{}
	for {
		var mf dto.MetricFamily
		err := dec.Decode(&mf)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("decoding the protobuf page: %v", err)
		}
		out[mf.GetName()] = &mf
	}
}

// buckets turns a native histogram's spans and deltas back into counts by bucket index.
func buckets(h *dto.Histogram) map[int32]uint64 {
	out := map[int32]uint64{}
	var i int32
	var count int64
	d := 0
	for k, s := range h.GetPositiveSpan() {
		if k == 0 {
			i = s.GetOffset()
		} else {
			i += s.GetOffset()
		}
		for j := uint32(0); j < s.GetLength(); j++ {
			count += h.GetPositiveDelta()[d]
			d++
			if count > 0 {
				out[i] = uint64(count)
			}
			i++
		}
	}
	return out
}

// TestProtoPage: every kind of family the package writes, read back by the Prometheus decoder.
func TestProtoPage(t *testing.T) {
	p := NewProtoPage()
	p.Family("a_total", "A counter.", "counter")
	p.Sample("a_total", 3, "path", "/x", "code", "200")
	p.Sample("a_total", 0, "path", "/y", "code", "500")
	p.Metric("b", "A gauge.", "gauge", 0.25)
	h := NewNativeHistogram([]float64{0.1, 1})
	h.ObserveN(0.05, 2)
	h.ObserveN(0.1, 1)
	h.ObserveN(5, 1)
	p.Histogram("c_seconds", "A histogram.", h)
	WriteGo(p)
	fams := decodeProto(t, p.Bytes())

	a := fams["a_total"]
	if a.GetType() != dto.MetricType_COUNTER || a.GetHelp() != "A counter." || len(a.Metric) != 2 {
		t.Fatalf("a_total = %v", a)
	}
	if m := a.Metric[0]; m.GetCounter().GetValue() != 3 || len(m.Label) != 2 || m.Label[0].GetName() != "path" || m.Label[0].GetValue() != "/x" ||
		m.Label[1].GetName() != "code" || m.Label[1].GetValue() != "200" {
		t.Errorf("a_total's first sample = %v", m)
	}
	if m := a.Metric[1]; m.Counter == nil || m.GetCounter().GetValue() != 0 {
		t.Errorf("a counter of 0 must be written (proto2 has presence): %v", m)
	}
	if b := fams["b"]; b.GetType() != dto.MetricType_GAUGE || b.Metric[0].GetGauge().GetValue() != 0.25 {
		t.Errorf("b = %v", b)
	}
	c := fams["c_seconds"]
	if c.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("c_seconds = %v", c)
	}
	ch := c.Metric[0].GetHistogram()
	if ch.GetSampleCount() != 4 || ch.GetSampleSum() != 5.2 || len(ch.Bucket) != 2 ||
		ch.Bucket[0].GetCumulativeCount() != 3 || ch.Bucket[0].GetUpperBound() != 0.1 || ch.Bucket[1].GetCumulativeCount() != 3 {
		t.Errorf("classic part of c_seconds = %v", ch)
	}
	// 0.05 and 0.1 at schema 3: 0.1 = 2^-3.32, bucket ceil(-3.32*8) = -26; 0.05: -34; 5: 19.
	if got, want := buckets(ch), map[int32]uint64{-34: 2, -26: 1, 19: 1}; !equalCounts(got, want) || ch.GetSchema() != 3 {
		t.Errorf("native buckets of c_seconds = %v at schema %d, want %v at 3", got, ch.GetSchema(), want)
	}
	gc := fams["go_gc_duration_seconds"]
	if gc.GetType() != dto.MetricType_SUMMARY || len(gc.Metric) != 1 || len(gc.Metric[0].GetSummary().Quantile) != 5 {
		t.Errorf("go_gc_duration_seconds = %v", gc)
	}
	if g := fams["go_goroutines"]; g == nil || g.Metric[0].GetGauge().GetValue() < 1 {
		t.Errorf("go_goroutines = %v", g)
	}
}

func equalCounts(a, b map[int32]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestNativeMatchesClientLibrary observes the same latencies into our native histogram and
// into the Prometheus client library's (factor 1.1 is its schema 3, the same zero threshold
// and bucket limit) and compares the buckets it exposes with ours: placement at the bounds,
// and the schema reduction when more than 160 buckets would be used.
func TestNativeMatchesClientLibrary(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals []float64
	}{
		{"bounds", []float64{1, 2, 0.5, math.Exp2(1.0 / 8), math.Exp2(3.0 / 8), math.Nextafter(math.Exp2(3.0/8), 10), 0, 1e-3}},
		{"latencies", latencies(rand.New(rand.NewPCG(1, 2)), 5000, 1e-4, 0.5)},
		{"wide", latencies(rand.New(rand.NewPCG(3, 4)), 5000, 1e-7, 1e4)}, // more than 160 buckets at schema 3
	} {
		t.Run(tc.name, func(t *testing.T) {
			ours := NewNativeHistogram([]float64{0.01, 0.1})
			lib := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "x", Help: "x", Buckets: []float64{0.01, 0.1},
				NativeHistogramBucketFactor: 1.1, NativeHistogramMaxBucketNumber: 160})
			for _, v := range tc.vals {
				ours.ObserveN(v, 1)
				lib.Observe(v)
			}
			var m dto.Metric
			if err := lib.Write(&m); err != nil {
				t.Fatal(err)
			}
			p := NewProtoPage()
			p.Histogram("x", "x", ours)
			got := decodeProto(t, p.Bytes())["x"].Metric[0].GetHistogram()
			want := m.GetHistogram()
			if got.GetSchema() != want.GetSchema() || got.GetZeroCount() != want.GetZeroCount() || got.GetZeroThreshold() != want.GetZeroThreshold() ||
				got.GetSampleCount() != want.GetSampleCount() || !equalCounts(buckets(got), buckets(want)) {
				t.Errorf("ours: schema %d zero %d/%g count %d buckets %v\nlibrary: schema %d zero %d/%g count %d buckets %v",
					got.GetSchema(), got.GetZeroCount(), got.GetZeroThreshold(), got.GetSampleCount(), buckets(got),
					want.GetSchema(), want.GetZeroCount(), want.GetZeroThreshold(), want.GetSampleCount(), buckets(want))
			}
		})
	}
}

// latencies draws n log-uniform values in [lo, hi).
func latencies(r *rand.Rand, n int, lo, hi float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo * math.Pow(hi/lo, r.Float64())
	}
	return out
}

// TestHandlerNegotiates: the text format by default and for a text Accept header, the
// protobuf format when Prometheus asks for it (the header Prometheus sends with native
// histograms on).
func TestHandlerNegotiates(t *testing.T) {
	srv := httptest.NewServer(Handler(func(p *Page) { p.Metric("up_total", "x", "counter", 1) }))
	defer srv.Close()
	for _, tc := range []struct{ accept, want string }{
		{"", ContentType},
		{"application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", OpenMetricsType},
		{"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.2", ProtoContentType},
	} {
		req, _ := http.NewRequest("GET", srv.URL, nil)
		if tc.accept != "" {
			req.Header.Set("Accept", tc.accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := resp.Header.Get("Content-Type"); got != tc.want {
			t.Errorf("Accept %q: Content-Type %q, want %q", tc.accept, got, tc.want)
		}
		if tc.want == ProtoContentType {
			if f := decodeProto(t, b)["up_total"]; f == nil || f.Metric[0].GetCounter().GetValue() != 1 {
				t.Errorf("protobuf page: %v", f)
			}
		} else if !bytes.Contains(b, []byte("up_total 1\n")) || (tc.want == OpenMetricsType) != bytes.HasSuffix(b, []byte("# EOF\n")) {
			t.Errorf("text page: %q", b)
		}
	}
}
