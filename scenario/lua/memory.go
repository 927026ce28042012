package lua

import (
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"strings"
	"time"

	glua "github.com/yuin/gopher-lua"
)

// DefaultMaxMemory bounds the heap while a script runs: gopher-lua has no allocation limit
// of its own, so the process's heap is sampled and a script is stopped, with a clear
// error, once it is over this (the engine's own heap is tens of MB).
const DefaultMaxMemory = 1 << 30

// memorySample is how often the heap is sampled while a script is loaded.
const memorySample = 20 * time.Millisecond

// errMemory is the cause of a script stopped for its memory.
var errMemory = errors.New("over the memory limit")

// watchMemory samples the heap until the source is closed; over max it records the error
// and cancels s.base (and with it every Lua call, at load time or in the run).
func (s *Source) watchMemory(max int64, cancel context.CancelCauseFunc) func() {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(memorySample)
		defer t.Stop()
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if h := int64(sample[0].Value.Uint64()); h > max {
				err := fmt.Errorf("script %s: the heap grew to %d MiB, %w of %d MiB (a table or string without bound?); stopped", s.name, h>>20, errMemory, max>>20)
				s.fail(&scriptError{err.Error()})
				cancel(err)
				return
			}
		}
	}()
	return func() { close(done) }
}

// memoryCause returns the memory error when ctx ended for it, else nil.
func memoryCause(ctx context.Context) error {
	if c := context.Cause(ctx); c != nil && errors.Is(c, errMemory) {
		return c
	}
	return nil
}

// boundedRep replaces string.rep: a single call asking for more than max bytes is an
// error instead of one allocation the process cannot survive.
func boundedRep(max int64) glua.LGFunction {
	return func(L *glua.LState) int {
		s, n := L.CheckString(1), L.CheckInt64(2)
		sep := L.OptString(3, "")
		if n <= 0 {
			L.Push(glua.LString(""))
			return 1
		}
		if size := (int64(len(s)) + int64(len(sep))) * n; size > max || size < 0 {
			L.RaiseError("string.rep: %d bytes asked for, over the memory limit of %d MiB", size, max>>20)
		}
		if sep == "" {
			L.Push(glua.LString(strings.Repeat(s, int(n))))
			return 1
		}
		L.Push(glua.LString(strings.Repeat(s+sep, int(n)-1) + s))
		return 1
	}
}
