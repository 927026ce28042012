package measure

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// zlibWriter is one writer reused by every encoding (under zlibMu). It compresses with
// Huffman coding only: the V2 counts are already run-length coded varints, on which
// LZ77 matching gains 2-3% (3,633 bytes against 3,549 for 100,000 latencies), while its
// state (the hash chains of the other levels) is about 750 KB of memory touched, the largest
// part of recording a run in a process that peaks at a few MB. hdrhistogram-go used a fresh
// BestCompression writer per histogram. Any V2 decoder reads either (zlib is zlib).
// A sync.Pool would not do: it is emptied by the garbage collections that those very
// encodings trigger.
var (
	zlibMu     sync.Mutex
	zlibWriter *zlib.Writer
)

// encodeV2 returns h in HdrHistogram's V2 compressed base64 form, the layout of
// h.Encode(hdr.V2CompressedEncodingCookieBase) with a Huffman-only zlib stream
// (TestEncodeV2MatchesLibrary).
func encodeV2(h *hdr.Histogram) ([]byte, error) {
	s := h.Export()
	counts := s.Counts
	limit := 1 // the library writes counts up to the bucket of Max, and at least one
	for i := len(counts) - 1; i > 0; i-- {
		if counts[i] != 0 {
			limit = i + 1
			break
		}
	}
	var body []byte
	for i := 0; i < limit; {
		c := counts[i]
		i++
		if c == 0 {
			zeros := int64(1)
			for i < limit && counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				c = -zeros // a run of zeros
			}
		}
		body = appendZigZag(body, c)
	}
	ratio := s.IntegerToDoubleConversionRatio
	if ratio == 0 {
		ratio = 1
	}
	raw := make([]byte, 0, 40+len(body))
	raw = binary.BigEndian.AppendUint32(raw, uint32(hdr.V2EncodingCookieBase|0x10))
	raw = binary.BigEndian.AppendUint32(raw, uint32(len(body)))
	raw = binary.BigEndian.AppendUint32(raw, 0) // normalizing index offset: hdrhistogram-go always writes 0
	raw = binary.BigEndian.AppendUint32(raw, uint32(s.SignificantFigures))
	raw = binary.BigEndian.AppendUint64(raw, uint64(s.LowestTrackableValue))
	raw = binary.BigEndian.AppendUint64(raw, uint64(s.HighestTrackableValue))
	raw = binary.BigEndian.AppendUint64(raw, math.Float64bits(ratio))
	raw = append(raw, body...)

	var z bytes.Buffer
	z.Write(make([]byte, 8)) // cookie and compressed length, filled below
	zlibMu.Lock()
	if zlibWriter == nil {
		zlibWriter, _ = zlib.NewWriterLevel(&z, zlib.HuffmanOnly) // the level is valid
	} else {
		zlibWriter.Reset(&z)
	}
	_, err := zlibWriter.Write(raw)
	if err == nil {
		err = zlibWriter.Close()
	}
	zlibMu.Unlock()
	if err != nil {
		return nil, err
	}
	out := z.Bytes()
	binary.BigEndian.PutUint32(out[0:], uint32(hdr.V2CompressedEncodingCookieBase|0x10))
	binary.BigEndian.PutUint32(out[4:], uint32(len(out)-8))
	return base64.StdEncoding.AppendEncode(nil, out), nil
}

// appendZigZag appends v as a ZigZag LEB128 long of at most 9 bytes (the V2 counts format).
func appendZigZag(b []byte, v int64) []byte {
	u := uint64((v << 1) ^ (v >> 63))
	for i := 0; i < 8 && u>>7 != 0; i++ {
		b = append(b, byte(u&0x7f|0x80))
		u >>= 7
	}
	return append(b, byte(u)) // the ninth byte carries all 8 remaining bits
}

// Bounds of a histogram accepted for decoding: its counts array (which the decoder
// allocates before reading a count) stays under a megabyte, whatever the header claims.
const (
	maxDecodeSigFigs = 3
	maxDecodeHighest = 1 << 50
)

// checkV2Header reads the header of a V2 compressed base64 histogram and refuses one whose
// range or precision would make the decoder allocate more than the bounds above (56 bytes
// claiming 1..2^62 at 5 digits cost 47 MB). Other encodings are left to the decoder.
func checkV2Header(s string) error {
	if len(s) < 12 {
		return nil
	}
	enc, err := base64.StdEncoding.DecodeString(s[:min(len(s), 256)&^3])
	if err != nil || len(enc) < 8 || binary.BigEndian.Uint32(enc)&^0xff != uint32(hdr.V2CompressedEncodingCookieBase)&^0xff {
		return nil
	}
	all, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil // the decoder says so
	}
	zr, err := zlib.NewReader(bytes.NewReader(all[8:]))
	if err != nil {
		return nil
	}
	defer zr.Close()
	var h [40]byte
	if _, err := io.ReadFull(zr, h[:]); err != nil {
		return nil
	}
	sig, lowest, highest := int32(binary.BigEndian.Uint32(h[12:])), int64(binary.BigEndian.Uint64(h[16:])), int64(binary.BigEndian.Uint64(h[24:]))
	if sig < 1 || sig > maxDecodeSigFigs || lowest < 1 || highest < 2*lowest || highest > maxDecodeHighest {
		return fmt.Errorf("histogram of %d significant digits over %d..%d: beyond %d digits up to %d", sig, lowest, highest, maxDecodeSigFigs, int64(maxDecodeHighest))
	}
	return nil
}
