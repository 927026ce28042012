// Package traceparent gives requests W3C Trace Context: a traceparent header (version 00, a
// random trace id and parent id per request, sampled) written into raw HTTP/1.1 requests
// without allocating, and the parsing of one, for targets and for requests that carry
// their own.
package traceparent

import (
	"bytes"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
)

// Name is the header's name.
const Name = "traceparent"

// valueLen is the length of a version-00 value: 00-<32 hex>-<16 hex>-01.
const valueLen = 2 + 1 + 32 + 1 + 16 + 1 + 2

// TraceID is a trace id (16 bytes), ParentID a parent (span) id (8 bytes).
type (
	TraceID  [16]byte
	ParentID [8]byte
)

// String is the id as 32 lower-case hex digits.
func (t TraceID) String() string { return hex.EncodeToString(t[:]) }

// IsZero reports whether t is no id.
func (t TraceID) IsZero() bool { return t == TraceID{} }

// Gen makes random ids: a PCG seeded from crypto/rand, one per connection or worker, so
// making ids takes no lock and no system call.
type Gen struct {
	pcg rand.PCG
}

// NewGen returns a generator seeded from crypto/rand.
func NewGen() *Gen {
	var seed [16]byte
	_, _ = crand.Read(seed[:]) // crypto/rand.Read never fails on supported platforms
	g := &Gen{}
	g.pcg.Seed(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:]))
	return g
}

// Next returns a new trace id and parent id, neither all zeros (the standard forbids it).
func (g *Gen) Next() (t TraceID, p ParentID) {
	a, b, c := g.pcg.Uint64(), g.pcg.Uint64(), g.pcg.Uint64()
	if a|b == 0 {
		b = 1
	}
	if c == 0 {
		c = 1
	}
	binary.BigEndian.PutUint64(t[:8], a)
	binary.BigEndian.PutUint64(t[8:], b)
	binary.BigEndian.PutUint64(p[:], c)
	return t, p
}

// putValue writes "00-<trace>-<parent>-01" into dst (valueLen bytes).
func putValue(dst []byte, t TraceID, p ParentID) {
	_ = dst[valueLen-1]
	dst[0], dst[1], dst[2] = '0', '0', '-'
	for i, b := range t {
		dst[3+2*i], dst[4+2*i] = hexDigits[b>>4], hexDigits[b&15]
	}
	dst[35] = '-'
	for i, b := range p {
		dst[36+2*i], dst[37+2*i] = hexDigits[b>>4], hexDigits[b&15]
	}
	dst[52], dst[53], dst[54] = '-', '0', '1'
}

const hexDigits = "0123456789abcdef"

// AppendValue appends the header's value for t and p.
func AppendValue(dst []byte, t TraceID, p ParentID) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, valueLen)...)
	putValue(dst[n:], t, p)
	return dst
}

// Parse reads a traceparent value; ok is false unless it is a well-formed version-00 value
// (or a later version's first four fields) with ids that are not all zeros.
func Parse(v []byte) (t TraceID, p ParentID, sampled bool, ok bool) {
	v = bytes.TrimSpace(v)
	if len(v) < valueLen || v[2] != '-' || v[35] != '-' || v[52] != '-' || (len(v) > valueLen && v[55] != '-') {
		return t, p, false, false
	}
	if bytes.Equal(v[:2], []byte("ff")) || !lowerHex(v[:2]) || !lowerHex(v[3:35]) || !lowerHex(v[36:52]) || !lowerHex(v[53:55]) {
		return t, p, false, false
	}
	if string(v[:2]) == "00" && len(v) != valueLen {
		return t, p, false, false
	}
	var flags [1]byte
	_, _ = hex.Decode(t[:], v[3:35])
	_, _ = hex.Decode(p[:], v[36:52])
	_, _ = hex.Decode(flags[:], v[53:55])
	if t == (TraceID{}) || p == (ParentID{}) {
		return t, p, false, false
	}
	return t, p, flags[0]&1 != 0, true
}

func lowerHex(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
