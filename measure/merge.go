package measure

import (
	"math"
	"sort"
	"time"
)

// Merge adds o's samples and counts to s (steps of the same level from other workers or
// hosts, aligned by wall clock). The window becomes the union of both windows.
func (s *Step) Merge(o *Step) {
	start := s.Start
	if start.IsZero() || (!o.Start.IsZero() && o.Start.Before(start)) {
		start = o.Start
	}
	end := s.Start.Add(time.Duration(s.Elapsed))
	if oe := o.Start.Add(time.Duration(o.Elapsed)); oe.After(end) {
		end = oe
	}
	if s.Exemplars != nil && s.Start.After(start) {
		s.Exemplars = (&Exemplars{Keep: s.Exemplars.Keep}).Merge(s.Exemplars, s.Start.Sub(start))
	}
	if shift := int(s.Start.Sub(start) / time.Second); shift != 0 {
		for i := range s.Timeline {
			s.Timeline[i].T += shift
		}
	}
	offset := int(o.Start.Sub(start) / time.Second)
	s.Start, s.Elapsed = start, Duration(end.Sub(start))
	s.ThreadRPS = poolRates(s.ThreadRPS, s.Threads, o.ThreadRPS, o.Threads)
	s.Threads += o.Threads
	s.Attempts += o.Attempts
	s.Requests += o.Requests
	s.Successes += o.Successes
	s.Bytes += o.Bytes
	s.Connects += o.Connects
	s.ConnectTime += o.ConnectTime
	s.Errors.Add(o.Errors)
	s.Drained.add(o.Drained)
	s.Status = AddStatus(s.Status, o.Status)
	s.Latency = mergeHist(s.Latency, o.Latency)
	s.Uncorrected = mergeHist(s.Uncorrected, o.Uncorrected)
	s.SendLag = mergeHist(s.SendLag, o.SendLag)
	s.AllAttempts = mergeHist(s.AllAttempts, o.AllAttempts)
	for _, sec := range o.Timeline {
		sec.T += offset
		s.Timeline = addSecond(s.Timeline, sec)
	}
	for _, ep := range o.Endpoints {
		s.Endpoints = mergeEndpoint(s.Endpoints, ep)
	}
	s.Exemplars = s.Exemplars.Merge(o.Exemplars, o.Start.Sub(start))
	s.ServerTiming = s.ServerTiming.Merge(o.ServerTiming)
	if o.Open != nil {
		if s.Open == nil {
			s.Open = &OpenLoop{}
		}
		s.Open.TargetRate += o.Open.TargetRate
		s.Open.Scheduled += o.Open.Scheduled
		s.Open.Sent += o.Open.Sent
		s.Open.LateSends += o.Open.LateSends
		s.Open.Connections += o.Open.Connections
		s.Open.MaxLag = max(s.Open.MaxLag, o.Open.MaxLag)
	}
	s.Generator = mergeGenerator(s.Generator, o.Generator)
	s.GeneratorLimit = mergeLimit(s.GeneratorLimit, o.GeneratorLimit, s.Concurrency, o.Concurrency)
	s.HTTP2 = s.HTTP2.Merge(o.HTTP2)
	s.GRPC = s.GRPC.Merge(o.GRPC)
	s.Streams = s.Streams.Merge(o.Streams)
	if o.Failure != nil {
		f := *o.Failure
		s.Failure = &f
	}
	s.Warnings = append(s.Warnings, o.Warnings...)
	s.Finish()
}

// poolRates combines the per-thread rate statistics of two groups of na and nb threads.
func poolRates(a RateStats, na int, b RateStats, nb int) RateStats {
	if na <= 0 {
		return b
	}
	if nb <= 0 {
		return a
	}
	wa, wb := float64(na), float64(nb)
	mean := (a.Mean*wa + b.Mean*wb) / (wa + wb)
	va := a.Stdev*a.Stdev + (a.Mean-mean)*(a.Mean-mean)
	vb := b.Stdev*b.Stdev + (b.Mean-mean)*(b.Mean-mean)
	return RateStats{
		Mean:        mean,
		Stdev:       math.Sqrt((va*wa + vb*wb) / (wa + wb)),
		Max:         math.Max(a.Max, b.Max),
		WithinStdev: (a.WithinStdev*wa + b.WithinStdev*wb) / (wa + wb),
	}
}

// AddStatus adds the counts of src to dst (made when nil) and returns dst.
func AddStatus(dst, src map[int]int64) map[int]int64 {
	if dst == nil {
		dst = make(map[int]int64, len(src))
	}
	for code, n := range src {
		dst[code] += n
	}
	return dst
}

func mergeHist(a, b *Histogram) *Histogram {
	if b == nil {
		return a
	}
	if a == nil {
		return b.Clone()
	}
	a.Merge(b)
	return a
}

func addSecond(tl []Second, sec Second) []Second {
	i := sort.Search(len(tl), func(i int) bool { return tl[i].T >= sec.T })
	if i < len(tl) && tl[i].T == sec.T {
		tl[i].Requests += sec.Requests
		tl[i].Errors += sec.Errors
		tl[i].Bytes += sec.Bytes
		// Percentiles of two intervals do not merge: keep the larger, an upper bound.
		tl[i].P50, tl[i].P99, tl[i].Max = max(tl[i].P50, sec.P50), max(tl[i].P99, sec.P99), max(tl[i].Max, sec.Max)
		return tl
	}
	tl = append(tl, Second{})
	copy(tl[i+1:], tl[i:])
	tl[i] = sec
	return tl
}

func mergeEndpoint(eps []EndpointStats, ep EndpointStats) []EndpointStats {
	for i := range eps {
		if eps[i].Name == ep.Name {
			e := &eps[i]
			e.Requests += ep.Requests
			e.Drained += ep.Drained
			e.Successes += ep.Successes
			e.Errors.Add(ep.Errors)
			e.Status = AddStatus(e.Status, ep.Status)
			e.Latency = mergeHist(e.Latency, ep.Latency)
			e.LatencySummary = Summarize(e.Latency)
			return eps
		}
	}
	ep.Latency = mergeHist(nil, ep.Latency)
	ep.Status = AddStatus(nil, ep.Status)
	return append(eps, ep)
}

// mergeGenerator combines the generators of two merged steps (other workers or hosts): CPU
// and cores add up, the wall time is the longer one, the starvation the worse one.
func mergeGenerator(a, b *Generator) *Generator {
	if a == nil || b == nil {
		if a == nil {
			return b
		}
		return a
	}
	return &Generator{CPU: a.CPU + b.CPU, Wall: max(a.Wall, b.Wall), Cores: a.Cores + b.Cores,
		MachineCPUs: a.MachineCPUs + b.MachineCPUs, RunWait: a.RunWait + b.RunWait,
		SchedSlowPct: max(a.SchedSlowPct, b.SchedSlowPct)}
}

// Clone is a deep copy of s: merging into it (Merge) never changes s. It is the one copy of
// a step; a field added to Step that holds a pointer, map or slice is copied here.
func (s *Step) Clone() *Step {
	c := *s
	cloneHist := func(h *Histogram) *Histogram {
		if h == nil {
			return nil
		}
		return h.Clone()
	}
	c.Latency, c.Uncorrected, c.AllAttempts, c.SendLag = cloneHist(s.Latency), cloneHist(s.Uncorrected), cloneHist(s.AllAttempts), cloneHist(s.SendLag)
	c.Status = AddStatus(nil, s.Status)
	c.Timeline = append([]Second(nil), s.Timeline...)
	c.Endpoints = nil
	for _, ep := range s.Endpoints {
		ep.Latency = cloneHist(ep.Latency)
		ep.Status = AddStatus(nil, ep.Status)
		c.Endpoints = append(c.Endpoints, ep)
	}
	c.Warnings = append([]string(nil), s.Warnings...)
	if s.Exemplars != nil {
		c.Exemplars = s.Exemplars.Clone()
	}
	if s.ServerTiming != nil {
		c.ServerTiming = s.ServerTiming.Clone()
	}
	copyPtr(&c.UncorrectedSummary)
	copyPtr(&c.Open)
	copyPtr(&c.Generator)
	copyPtr(&c.GeneratorLimit)
	copyPtr(&c.Failure)
	copyPtr(&c.GRPC)
	c.Streams = s.Streams.Clone()
	if s.HTTP2 != nil {
		h := *s.HTTP2
		h.GoAways, h.Resets = addCounts(nil, s.HTTP2.GoAways), addCounts(nil, s.HTTP2.Resets)
		c.HTTP2 = &h
	}
	return &c
}

// copyPtr points *p at a copy of what it points at (nothing for nil).
func copyPtr[T any](p **T) {
	if *p != nil {
		v := **p
		*p = &v
	}
}
