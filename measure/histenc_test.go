package measure

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The reused encoder writes what hdrhistogram-go writes, except for the zlib stream's
// compression level: the library decodes it to an equal histogram, its header is the
// library's byte for byte, and it is at most a few percent larger.
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
	wantRaw, _ := base64.StdEncoding.DecodeString(string(want))
	for range 2 { // the second time with the reused writer
		got, err := encodeV2(h)
		if err != nil {
			t.Fatal(err)
		}
		back, err := hdr.Decode(got)
		if err != nil {
			t.Fatalf("%s: hdr.Decode(encodeV2) = %v", name, err)
		}
		if !back.Equals(h) {
			t.Errorf("%s: hdr.Decode(encodeV2(h)) differs from h: %d values, max %d; want %d, max %d",
				name, back.TotalCount(), back.Max(), h.TotalCount(), h.Max())
		}
		raw, _ := base64.StdEncoding.DecodeString(string(got))
		if len(raw) < 8 || !bytes.Equal(raw[:4], wantRaw[:4]) {
			t.Errorf("%s: encodeV2 cookie %x, hdrhistogram-go %x", name, raw[:min(4, len(raw))], wantRaw[:4])
		}
		if len(got) > len(want)*11/10+16 {
			t.Errorf("%s: encodeV2 is %d bytes, hdrhistogram-go %d: more than 10%% larger", name, len(got), len(want))
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
