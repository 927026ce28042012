// Package liveheap measures the live heap, as the garbage collector finds it, while a function
// runs: for tests that bound memory with figures of memory, not of timing. It is imported by
// tests only.
package liveheap

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// Peak runs f and returns the largest live heap a garbage collection found while it ran, and
// the live heap before. Collections are made frequent (GOGC=10) and each is seen by a
// finalizer that re-arms itself, so the peak is missed by at most a tenth.
func Peak(f func()) (peak, before uint64) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	var (
		mu   sync.Mutex
		max  uint64
		stop bool
		done = make(chan struct{})
	)
	var arm func()
	arm = func() {
		sentinel := new([64]byte)
		runtime.SetFinalizer(sentinel, func(*[64]byte) {
			v := read()
			mu.Lock()
			defer mu.Unlock()
			max = maxOf(max, v)
			if stop {
				close(done)
				return
			}
			arm()
		})
	}
	before = Now()
	arm()
	f()
	mu.Lock()
	stop = true
	mu.Unlock()
	for {
		runtime.GC()
		select {
		case <-done:
			mu.Lock()
			defer mu.Unlock()
			return max, before
		case <-time.After(10 * time.Millisecond): // the finalizer has not run yet: collect again
		}
	}
}

// Now is the live heap after a full collection (two: what the first kept for finalizers is
// gone too).
func Now() uint64 {
	runtime.GC()
	runtime.GC()
	return read()
}

func read() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func maxOf(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}
