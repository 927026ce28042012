package measure

// Streams of intervals: each recorder's interval holds a Streams of its own (made at its first
// stream or gap), merged into the emitted Interval's; an interval of a run without streams
// has none (nil).

// reset empties a recorder's interval streams for reuse, keeping their histograms.
func (st *Streams) reset() {
	first, unc, gap := st.First, st.FirstUncorrected, st.Gap
	first.reset()
	gap.reset()
	if unc != nil {
		unc.reset()
	}
	*st = Streams{First: first, FirstUncorrected: unc, Gap: gap}
}

// stream returns iv's stream record, making it the first time (with the uncorrected time to
// first message when iv is an open loop's).
func (iv *recInterval) stream() *Streams {
	if iv.streams == nil {
		iv.streams = newStreams(iv.uncorrected != nil)
	}
	return iv.streams
}

// emptyStreams returns an interval's empty stream record, taking its histograms from hist.
func emptyStreams(open bool, hist func() *Histogram) *Streams {
	s := &Streams{First: hist(), Gap: hist()}
	if open {
		s.FirstUncorrected = hist()
	}
	return s
}

// mergeStreams adds a recorder's interval streams to the emitted interval, taking its
// histograms from hist.
func (iv *Interval) mergeStreams(rs *Streams, hist func() *Histogram) {
	if rs == nil {
		return
	}
	if iv.Streams == nil {
		iv.Streams = emptyStreams(rs.FirstUncorrected != nil, hist)
	}
	iv.Streams.Merge(rs)
}
