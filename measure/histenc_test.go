package measure

import (
	"bytes"
	"math/rand/v2"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The pooled encoder writes exactly what hdrhistogram-go writes, so run.json and every
// golden stay byte-identical.
func TestEncodeV2MatchesLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 16))
	cases := map[string]func(h *hdr.Histogram){
		"empty":        func(h *hdr.Histogram) {},
		"one value":    func(h *hdr.Histogram) { _ = h.RecordValue(1) },
		"top of range": func(h *hdr.Histogram) { _ = h.RecordValue(h.HighestTrackableValue()) },
		"huge counts":  func(h *hdr.Histogram) { _ = h.RecordValues(1234, 1<<62) },
		"latencies": func(h *hdr.Histogram) {
			for range 100000 {
				_ = h.RecordValue(int64(rng.ExpFloat64()*900) + 1)
			}
		},
		"spread": func(h *hdr.Histogram) {
			for range 5000 {
				_ = h.RecordValues(rng.Int64N(h.HighestTrackableValue())+1, rng.Int64N(1<<40)+1)
			}
		},
	}
	geometries := map[string]func() *hdr.Histogram{
		"ours":    func() *hdr.Histogram { return NewHistogram().h },
		"foreign": func() *hdr.Histogram { return hdr.New(1000, 10_000_000, 2) }, // a decoded peer's hlog
	}
	for gname, geometry := range geometries {
		for cname, fill := range cases {
			h := geometry()
			fill(h)
			checkEncodeV2(t, gname+"/"+cname, h)
		}
	}
}

func checkEncodeV2(t *testing.T, name string, h *hdr.Histogram) {
	t.Helper()
	want, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second time with the reused writer
		got, err := encodeV2(h)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: encodeV2 = %.60s..., hdrhistogram-go = %.60s...", name, got, want)
		}
	}
}

func TestAppendZigZag(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, 1 << 20, -(1 << 40), 1<<63 - 1, -1 << 63} {
		var want []byte
		// the library's byte layout: 7 bits per byte, high bit set when more follow, 9th byte whole
		u := uint64((v << 1) ^ (v >> 63))
		for i := 0; ; i++ {
			if i == 8 {
				want = append(want, byte(u))
				break
			}
			if u>>7 == 0 {
				want = append(want, byte(u))
				break
			}
			want = append(want, byte(u&0x7f|0x80))
			u >>= 7
		}
		if got := appendZigZag(nil, v); !bytes.Equal(got, want) {
			t.Errorf("appendZigZag(%d) = %x, want %x", v, got, want)
		}
	}
}
