package measure

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"io"
	"math"
	"slices"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// decoder is what every compact decoding reuses (under decodeMu): one zlib reader (a fresh
// one is a 40 KB window) and the buffers of the stages. The library's decoder makes a full
// histogram and a copy of its counts for each one: 2 GB of garbage to load a 35 MB sweep.
var (
	decodeMu sync.Mutex
	decoder  compactDecoder
)

type compactDecoder struct {
	z         io.ReadCloser // a zlib.Resetter once made
	raw, body []byte
	header    [40]byte
	compact   bins
}

// decodeCompact decodes s, the V2 compressed base64 form of a histogram of the standard
// shape, straight into the compact form, with the library decoder's checks. It returns nil
// for anything else (another shape or encoding, a corrupt or truncated form, one the compact
// form would not make smaller), which the library's decoder then reads or refuses.
func decodeCompact(s []byte) *bins {
	decodeMu.Lock()
	defer decodeMu.Unlock()
	d := &decoder
	defer func() {
		if cap(d.raw) > 1<<20 { // not a histogram of the standard shape: not kept for the next
			d.raw = nil
		}
	}()
	d.raw = slices.Grow(d.raw[:0], base64.StdEncoding.DecodedLen(len(s)))
	m, err := base64.StdEncoding.Decode(d.raw[:cap(d.raw)], s)
	if err != nil || m < 8 {
		return nil
	}
	raw := d.raw[:m]
	clen := int32(binary.BigEndian.Uint32(raw[4:]))
	if int32(binary.BigEndian.Uint32(raw))&^0xf0 != hdr.V2CompressedEncodingCookieBase || clen < 0 || int(clen) > m-8 {
		return nil
	}
	if err := d.reset(raw[8 : 8+clen]); err != nil {
		return nil
	}
	if _, err := io.ReadFull(d.z, d.header[:]); err != nil {
		return nil
	}
	h := d.header[:]
	cookie, length := int32(binary.BigEndian.Uint32(h)), int32(binary.BigEndian.Uint32(h[4:]))
	sig, lowest, highest := int32(binary.BigEndian.Uint32(h[12:])), int64(binary.BigEndian.Uint64(h[16:])), int64(binary.BigEndian.Uint64(h[24:]))
	counts := fullBytes() / 8
	if cookie&^0xf0 != hdr.V2EncodingCookieBase || length < 0 || int(length) > 9*counts ||
		sig != SigFigs || lowest != int64(LowestLatency/time.Microsecond) || highest != int64(HighestLatency/time.Microsecond) {
		return nil
	}
	// One byte past the payload, so trailing data is seen; the end verifies the checksum.
	d.body = slices.Grow(d.body[:0], int(length)+1)
	if n, ok := readToEnd(d.z, d.body[:length+1]); !ok || n != int(length) {
		return nil
	}
	c := &d.compact
	c.enc, c.first, c.last, c.n, c.total = c.enc[:0], 0, 0, 0, 0
	if !c.fill(d.body[:length], counts) || !c.small() {
		return nil
	}
	out := *c
	out.enc = bytes.Clone(c.enc)
	return &out
}

// readToEnd reads r into b until b is full or r ends, and says how much it read; false when r
// failed (a truncated or corrupt stream: io.ReadFull would call a stream cut short, and the
// deflate reader's own unexpected end, both io.ErrUnexpectedEOF).
func readToEnd(r io.Reader, b []byte) (int, bool) {
	n := 0
	for n < len(b) {
		k, err := r.Read(b[n:])
		n += k
		if err == io.EOF {
			return n, true
		}
		if err != nil {
			return n, false
		}
	}
	return n, true
}

// reset points the reused zlib reader at compressed.
func (d *compactDecoder) reset(compressed []byte) error {
	if d.z == nil {
		z, err := zlib.NewReader(bytes.NewReader(compressed))
		if err != nil {
			return err
		}
		d.z = z
		return nil
	}
	return d.z.(zlib.Resetter).Reset(bytes.NewReader(compressed), nil)
}

// fill adds the V2 payload's counts (ZigZag LEB128 longs, a negative one a run of that many
// empty buckets) to c, false when the payload is corrupt: a truncated long, an index past
// the counts, a total past int64, or a bucket beyond the shape's table.
func (c *bins) fill(payload []byte, counts int) bool {
	at := 0
	for p := 0; p < len(payload); {
		v, k := zigZag(payload[p:])
		if k == 0 {
			return false
		}
		p += k
		if v < 0 {
			if zeros := -v; zeros <= 0 || zeros > int64(counts-at) {
				return false
			}
			at += int(-v)
			continue
		}
		if at >= counts || v > math.MaxInt64-c.total {
			return false
		}
		if v > 0 {
			if at >= len(shape()) {
				return false
			}
			c.add(at, v)
		}
		at++
	}
	return true
}

// zigZag reads a ZigZag LEB128 long of at most 9 bytes (the ninth carries 8 bits) and how
// many bytes it took, 0 when b ends inside it.
func zigZag(b []byte) (int64, int) {
	var u uint64
	for i := range 9 {
		if i >= len(b) {
			return 0, 0
		}
		if i == 8 {
			u |= uint64(b[i]) << 56
			return int64(u>>1) ^ -int64(u&1), 9
		}
		u |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return int64(u>>1) ^ -int64(u&1), i + 1
		}
	}
	panic("unreachable")
}
