package target

import (
	"net/http"
	"strconv"
	"sync/atomic"
)

// HotRounds is how many rounds of arithmetic one /hot request spins (a few hundred µs).
const HotRounds = 150_000

// MaxWork caps the work knob: rounds of the /hot spin per request (about a second).
const MaxWork = 100_000_000

// AllocChunks is how many slices (of about 1 KiB each) and map entries one /alloc request builds.
const AllocChunks = 48

var hotSeed atomic.Uint64

// hot serves GET /hot: CPU work in apiperfHotHandlerSpin, result in the body.
func hot(w http.ResponseWriter, r *http.Request) {
	v := apiperfHotHandlerSpin(hotSeed.Add(1), HotRounds)
	w.Header()["Content-Type"] = jsonType
	w.Write(strconv.AppendUint([]byte(`{"result":`), v, 10))
	w.Write([]byte("}"))
}

// apiperfHotHandlerSpin runs rounds of xorshift and sums the results. Its name is
// unique so it can be found in a CPU profile; it must not be inlined.
//
//go:noinline
func apiperfHotHandlerSpin(seed uint64, rounds int) uint64 {
	x := seed*0x9E3779B97F4A7C15 | 1
	var acc uint64
	for range rounds {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		acc += x % 1_000_003
	}
	return acc
}

// alloc serves GET /alloc: garbage made in apiperfAllocHandlerGarbage, a checksum in the body.
func alloc(w http.ResponseWriter, r *http.Request) {
	v := apiperfAllocHandlerGarbage(AllocChunks)
	w.Header()["Content-Type"] = jsonType
	w.Write(strconv.AppendInt([]byte(`{"result":`), int64(v), 10))
	w.Write([]byte("}"))
}

// apiperfAllocHandlerGarbage builds and drops n heap slices of about 1 KiB and an n-entry
// map, and returns a checksum of them. Its name is unique so it can be found in a heap
// profile; it must not be inlined.
//
//go:noinline
func apiperfAllocHandlerGarbage(n int) int {
	var chunks [][]byte
	m := make(map[int]string, n)
	for i := range n {
		b := make([]byte, 1024+i)
		b[i%len(b)] = byte(i)
		chunks = append(chunks, b)
		m[i] = strconv.Itoa(i * i)
	}
	sum := 0
	for i, c := range chunks {
		sum += len(c) + int(c[i%len(c)]) + len(m[i])
	}
	return sum
}
