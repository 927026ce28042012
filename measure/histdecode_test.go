package measure

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
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
	var h Histogram
	alloc, err := decodeAllocs(&h, js)
	if err == nil || !strings.Contains(err.Error(), "beyond 3 digits") || alloc > 1<<20 {
		t.Errorf("decoding a %d-byte histogram claiming 1..2^62 at 5 digits: %v, %d bytes allocated; want it refused under 1 MB", len(huge), err, alloc)
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

// TestDecodeRefusesZlibBomb: a histogram whose header claims a payload of 1 GiB, with a
// zlib stream of 200 MiB behind it (a few hundred KB on the wire), is refused before its
// payload is inflated.
func TestDecodeRefusesZlibBomb(t *testing.T) {
	o := hdr.New(1, 3600e6, 3)
	o.RecordValue(1500)
	b, _ := o.Encode(hdr.V2CompressedEncodingCookieBase)
	raw, _ := base64.StdEncoding.DecodeString(string(b))
	zr, err := zlib.NewReader(bytes.NewReader(raw[8:]))
	if err != nil {
		t.Fatal(err)
	}
	inner, _ := io.ReadAll(zr)
	binary.BigEndian.PutUint32(inner[4:], 1<<30) // the payload's length
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	zw.Write(inner)
	zero := make([]byte, 1<<20)
	for range 200 {
		zw.Write(zero)
	}
	zw.Close()
	binary.BigEndian.PutUint32(raw[4:], uint32(z.Len()))
	bomb := base64.StdEncoding.EncodeToString(append(raw[:8:8], z.Bytes()...))
	js, _ := json.Marshal(bomb)
	var h Histogram
	alloc, err := decodeAllocs(&h, js)
	if err == nil || alloc > 16<<20 {
		t.Errorf("decoding a %d-byte histogram claiming a 1 GiB payload: %v, %d MiB allocated; want it refused under 16 MiB", len(bomb), err, alloc>>20)
	}
}

// decodeAllocs decodes js into h and says how many bytes that allocated.
func decodeAllocs(h *Histogram, js []byte) (uint64, error) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	before := m.TotalAlloc
	err := h.UnmarshalJSON(js)
	runtime.ReadMemStats(&m)
	return m.TotalAlloc - before, err
}

// libraryBuckets decodes s with hdrhistogram-go and returns its non-empty buckets and total,
// false when the library refuses s.
func libraryBuckets(s []byte) ([]Bucket, int64, bool) {
	d, err := hdr.Decode(s)
	if err != nil {
		return nil, 0, false
	}
	h := &Histogram{h: d}
	return h.Buckets(), d.TotalCount(), true
}

// checkCompactAsLibrary fails when decodeCompact accepts s and the library refuses it or
// reads other buckets; it says whether decodeCompact accepted s.
func checkCompactAsLibrary(t *testing.T, what string, s []byte) bool {
	t.Helper()
	c := decodeCompact(s)
	if c == nil {
		return false
	}
	want, total, ok := libraryBuckets(s)
	got := (&Histogram{b: c}).Buckets()
	if !ok || c.total != total || !slices.Equal(got, want) {
		t.Errorf("%s: decodeCompact read %d buckets, %d samples; the library (accepted %v) %d buckets, %d samples", what, len(got), c.total, ok, len(want), total)
	}
	return true
}

// TestDecodeCompactAsLibrary: the direct decoding into the compact form reads what
// hdrhistogram-go reads, for our encoder's output and the library's own (another zlib
// level), and accepts no corrupt form the library refuses (truncations, flipped bytes).
func TestDecodeCompactAsLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 40 {
		h := NewHistogram()
		for range rng.IntN(3000) { // trial 0 may be empty
			h.RecordN(time.Duration(rng.ExpFloat64()*float64(time.Duration(1+rng.IntN(80))*time.Millisecond)), 1+int64(rng.IntN(200)))
		}
		if trial == 1 {
			h.RecordN(time.Hour, 1<<40) // the last bucket, a count past 32 bits
		}
		ours, err := encodeV2(h.h)
		if err != nil {
			t.Fatal(err)
		}
		lib, err := h.h.Encode(hdr.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range [][]byte{ours, lib} {
			if !checkCompactAsLibrary(t, fmt.Sprintf("trial %d", trial), s) {
				t.Errorf("trial %d: decodeCompact refused a valid histogram of %d buckets", trial, len(h.Buckets()))
			}
		}
		raw, _ := base64.StdEncoding.DecodeString(string(ours))
		for k := range 30 {
			bad := slices.Clone(raw)
			switch k % 3 {
			case 0:
				bad = bad[:rng.IntN(len(bad))]
			default:
				bad[rng.IntN(len(bad))] ^= byte(1 + rng.IntN(255))
			}
			checkCompactAsLibrary(t, fmt.Sprintf("trial %d, corruption %d", trial, k), base64.StdEncoding.AppendEncode(nil, bad))
		}
	}
	// Another shape is left to the library's decoder (and re-homed by UnmarshalJSON).
	o := hdr.New(1, 1e9, 2)
	o.RecordValue(1500)
	s, _ := o.Encode(hdr.V2CompressedEncodingCookieBase)
	if decodeCompact(s) != nil {
		t.Errorf("decodeCompact read a histogram of 1..1e9 at 2 digits; want it left to the library")
	}
}

// FuzzDecodeCompact: whatever decodeCompact accepts, the library reads the same.
func FuzzDecodeCompact(f *testing.F) {
	h := NewHistogram()
	h.Record(time.Millisecond)
	h.Record(2 * time.Second)
	b, _ := encodeV2(h.h)
	f.Add(b)
	f.Add([]byte("HISTFAAAAB"))
	f.Fuzz(func(t *testing.T, s []byte) {
		checkCompactAsLibrary(t, fmt.Sprintf("%q", s), s)
	})
}
