package lua

import (
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	glua "github.com/yuin/gopher-lua"

	"github.com/apiperf/apiperf/measure"
)

// HasDone reports whether the script defines done(summary, latency, requests).
func (s *Source) HasDone() bool {
	s.mainMu.Lock()
	defer s.mainMu.Unlock()
	if s.main == nil {
		return false
	}
	_, ok := s.main.GetGlobal("done").(*glua.LFunction)
	return ok
}

// Done calls the script's done(summary, latency, requests) in the main state with what
// step measured, writing the script's output to w. It returns the first error a callback
// raised during the run, if any, else done's own error.
//
// summary has wrk's fields (duration in microseconds, requests, bytes, errors.connect/read/
// write/status/timeout, status counting responses outside the expected codes). latency is in
// microseconds. requests holds one sample per second of the timeline: the requests completed
// in that second divided by the number of threads (wrk samples each thread's rate instead).
func (s *Source) Done(w io.Writer, step *measure.Step) error {
	if err := s.Err(); err != nil {
		return err
	}
	if step == nil {
		step = &measure.Step{}
	}
	s.mainMu.Lock()
	defer s.mainMu.Unlock()
	L := s.main
	if L == nil {
		return nil
	}
	fn, ok := L.GetGlobal("done").(*glua.LFunction)
	if !ok {
		return nil
	}
	s.outMu.Lock()
	prev := s.out
	s.out = w
	s.outMu.Unlock()
	defer func() {
		s.outMu.Lock()
		s.out = prev
		s.outMu.Unlock()
	}()
	ctx, cancel := s.loadCtx()
	defer cancel()
	L.SetContext(ctx)
	defer L.SetContext(s.base)
	err := L.CallByParam(glua.P{Fn: fn, Protect: true},
		summaryTable(L, step), newStats(L, latencyStats(step.Latency)), newStats(L, requestStats(step)))
	if err != nil {
		return s.overBudget(ctx, "done", fmt.Errorf("script done: %s", luaMessage(s.name, err)))
	}
	return nil
}

// summaryTable is done's first argument.
func summaryTable(L *glua.LState, st *measure.Step) *glua.LTable {
	t := L.NewTable()
	t.RawSetString("duration", glua.LNumber(st.Elapsed.Duration()/time.Microsecond))
	// The numbers of the summary printed above it: responses inside the window, not those drained after.
	t.RawSetString("requests", glua.LNumber(st.InWindow()))
	t.RawSetString("bytes", glua.LNumber(st.Bytes-st.Drained.Bytes))
	e := L.NewTable()
	e.RawSetString("connect", glua.LNumber(st.Errors.Connect))
	e.RawSetString("read", glua.LNumber(st.Errors.Read+st.Errors.Protocol))
	e.RawSetString("write", glua.LNumber(st.Errors.Write))
	e.RawSetString("status", glua.LNumber(st.Errors.Status))
	e.RawSetString("timeout", glua.LNumber(st.Errors.Timeout))
	t.RawSetString("errors", e)
	return t
}

// stats is what wrk's latency and requests objects offer: min, max, mean, stdev,
// percentile(p), and the distinct values with their counts (#obj, obj(i)).
type stats struct {
	min, max, mean, stdev float64
	percentile            func(p float64) float64
	values                []float64 // distinct values, increasing
	counts                []int64
}

// latencyStats reads a latency histogram in microseconds.
func latencyStats(h *measure.Histogram) *stats {
	st := &stats{percentile: func(float64) float64 { return 0 }}
	if h == nil || h.Count() == 0 {
		return st
	}
	us := func(d time.Duration) float64 { return float64(d / time.Microsecond) }
	st.min, st.max, st.mean, st.stdev = us(h.Min()), us(h.Max()), us(h.Mean()), us(h.Stdev())
	st.percentile = func(p float64) float64 { return us(h.Percentile(p)) }
	for _, b := range h.Buckets() {
		if b.Count == 0 {
			continue
		}
		v := us(b.From)
		if n := len(st.values); n > 0 && st.values[n-1] == v {
			st.counts[n-1] += b.Count
			continue
		}
		st.values = append(st.values, v)
		st.counts = append(st.counts, b.Count)
	}
	return st
}

// requestStats makes per-thread requests-per-second samples from the step's timeline.
func requestStats(step *measure.Step) *stats {
	threads := max(step.Threads, 1)
	var samples []float64
	for _, sec := range step.Timeline {
		samples = append(samples, math.Round(float64(sec.Requests)/float64(threads)))
	}
	return sampleStats(samples)
}

// sampleStats describes a list of samples.
func sampleStats(samples []float64) *stats {
	st := &stats{percentile: func(float64) float64 { return 0 }}
	if len(samples) == 0 {
		return st
	}
	sorted := append([]float64(nil), samples...)
	sort.Float64s(sorted)
	var sum float64
	for _, v := range sorted {
		sum += v
	}
	st.min, st.max, st.mean = sorted[0], sorted[len(sorted)-1], sum/float64(len(sorted))
	if len(sorted) > 1 {
		var ss float64
		for _, v := range sorted {
			ss += (v - st.mean) * (v - st.mean)
		}
		st.stdev = math.Sqrt(ss / float64(len(sorted)-1))
	}
	st.percentile = func(p float64) float64 {
		// The smallest sample with at least p% of the samples at or below it.
		rank := int(math.Ceil(p / 100 * float64(len(sorted))))
		return sorted[min(max(rank, 1), len(sorted))-1]
	}
	for _, v := range sorted {
		if n := len(st.values); n > 0 && st.values[n-1] == v {
			st.counts[n-1]++
			continue
		}
		st.values = append(st.values, v)
		st.counts = append(st.counts, 1)
	}
	return st
}

const statsType = "wrk.stats"

// newStats wraps st as the userdata done receives.
func newStats(L *glua.LState, st *stats) *glua.LUserData {
	mt, ok := L.GetTypeMetatable(statsType).(*glua.LTable)
	if !ok {
		mt = L.NewTypeMetatable(statsType)
		percentile := L.NewFunction(func(L *glua.LState) int {
			st := checkStats(L)
			L.Push(glua.LNumber(st.percentile(float64(L.CheckNumber(2)))))
			return 1
		})
		L.SetField(mt, "__index", L.NewFunction(func(L *glua.LState) int {
			st := checkStats(L)
			switch L.CheckString(2) {
			case "min":
				L.Push(glua.LNumber(st.min))
			case "max":
				L.Push(glua.LNumber(st.max))
			case "mean":
				L.Push(glua.LNumber(st.mean))
			case "stdev":
				L.Push(glua.LNumber(st.stdev))
			case "percentile":
				L.Push(percentile)
			default:
				L.Push(glua.LNil)
			}
			return 1
		}))
		L.SetField(mt, "__len", L.NewFunction(func(L *glua.LState) int {
			L.Push(glua.LNumber(len(checkStats(L).values)))
			return 1
		}))
		// obj(i) is the i-th distinct value (from 1, increasing) and how many samples had it.
		L.SetField(mt, "__call", L.NewFunction(func(L *glua.LState) int {
			st := checkStats(L)
			i := L.CheckInt(2) - 1
			if i < 0 || i >= len(st.values) {
				L.Push(glua.LNumber(0))
				L.Push(glua.LNumber(0))
				return 2
			}
			L.Push(glua.LNumber(st.values[i]))
			L.Push(glua.LNumber(st.counts[i]))
			return 2
		}))
	}
	ud := L.NewUserData()
	ud.Value = st
	ud.Metatable = mt
	return ud
}

func checkStats(L *glua.LState) *stats {
	st, ok := L.CheckUserData(1).Value.(*stats)
	if !ok {
		L.ArgError(1, "stats expected")
	}
	return st
}
