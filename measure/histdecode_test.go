package measure

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// TestDecodeRefusesHugeHeader: 56 bytes claiming 1..2^62 at 5 digits made the decoder
// allocate 47 MB; they are refused before, while ordinary histograms still decode.
func TestDecodeRefusesHugeHeader(t *testing.T) {
	huge, err := hdr.New(1, 1<<62, 5).Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(string(huge))
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	before := m.TotalAlloc
	var h Histogram
	err = h.UnmarshalJSON(js)
	runtime.ReadMemStats(&m)
	if err == nil || !strings.Contains(err.Error(), "beyond 3 digits") || m.TotalAlloc-before > 1<<20 {
		t.Errorf("decoding a %d-byte histogram claiming 1..2^62 at 5 digits: %v, %d bytes allocated; want it refused under 1 MB", len(huge), err, m.TotalAlloc-before)
	}
	for _, o := range []*hdr.Histogram{hdr.New(1, 3600e6, 3), hdr.New(1, 1e9, 2), hdr.New(1000, 1<<40, 3)} {
		o.RecordValue(1500)
		b, _ := o.Encode(hdr.V2CompressedEncodingCookieBase)
		js, _ := json.Marshal(string(b))
		if err := h.UnmarshalJSON(js); err != nil || h.Count() != 1 || h.Max() < time.Millisecond {
			t.Errorf("decoding an ordinary histogram (%d..%d): %v, count %d", o.LowestTrackableValue(), o.HighestTrackableValue(), err, h.Count())
		}
	}
}
