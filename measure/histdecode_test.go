package measure

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
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
