package measure

import (
	"fmt"
	"io"
	"time"
)

// Tags of an interval log's histograms; the untagged ones are the corrected latency. The
// header names only the uncorrected tag, so that a log without streams stays as it was.
const (
	HlogUncorrectedTag = "uncorrected"       // the open loop's latency from the actual send
	HlogFirstTag       = "first"             // streams: time to first message (open loop: from when due)
	HlogFirstRawTag    = "first_uncorrected" // streams, open loop: time to first message from the actual send
	HlogGapTag         = "gap"               // streams: gaps between messages
)

// HlogWriter writes intervals as an HdrHistogram interval log (format 1.3, as
// HistogramLogProcessor, hdrhistogram-go and hdr-histogram-js read it): version, start-time
// and base-time headers, then one compressed histogram per interval. Values are microseconds
// (HistogramLogProcessor: -outputValueUnitRatio 1000 prints milliseconds); interval
// timestamps are seconds since the base time, the start of the first step.
type HlogWriter struct {
	w      io.Writer
	base   time.Time
	offset time.Duration // the current step's start after base
	err    error
}

// NewHlogWriter returns a writer to w; nothing is written before the first Begin.
func NewHlogWriter(w io.Writer) *HlogWriter { return &HlogWriter{w: w} }

// Begin starts a step (a run, or one repetition of a sweep level) that started at start.
// The first call writes the headers.
func (l *HlogWriter) Begin(start time.Time) error {
	if l.base.IsZero() {
		l.base = start
		ms := start.UnixMilli()
		l.printf("#[Histogram log format version 1.3]\n")
		l.printf("#[StartTime: %d.%03d (seconds since epoch), %s]\n", ms/1000, ms%1000, start.UTC().Format(time.RFC3339Nano))
		l.printf("#[BaseTime: %d.%03d (seconds since epoch)]\n", ms/1000, ms%1000)
		l.printf("#[values in microseconds; untagged: corrected latency; Tag=%s: open loop's latency from the actual send]\n", HlogUncorrectedTag)
		l.printf("\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n")
	}
	l.offset = start.Sub(l.base)
	return l.err
}

// Write logs iv's corrected histogram and, tagged, in open loop its uncorrected one, and for
// streams the times to first message (in open loop from the actual send too) and the gaps.
func (l *HlogWriter) Write(iv *Interval) error {
	if l.base.IsZero() {
		return fmt.Errorf("interval log: Write before Begin")
	}
	l.line("", iv, iv.Latency)
	if iv.Uncorrected != nil {
		l.line(HlogUncorrectedTag, iv, iv.Uncorrected)
	}
	if s := iv.Streams; s != nil {
		l.line(HlogFirstTag, iv, s.First)
		l.line(HlogFirstRawTag, iv, s.FirstUncorrected)
		l.line(HlogGapTag, iv, s.Gap)
	}
	return l.err
}

// Err is the first write error, if any.
func (l *HlogWriter) Err() error { return l.err }

func (l *HlogWriter) line(tag string, iv *Interval, h *Histogram) {
	if h == nil || l.err != nil {
		return
	}
	payload, err := encodeV2(h.full())
	if err != nil {
		l.err = fmt.Errorf("encoding interval %d: %w", iv.Index, err)
		return
	}
	if tag != "" {
		l.printf("Tag=%s,", tag)
	}
	start := (l.offset + iv.Start.Duration()).Seconds()
	maxMs := 0.0
	if h.Count() > 0 {
		maxMs = float64(h.maxUS()) / 1000
	}
	l.printf("%.3f,%.3f,%.3f,%s\n", start, iv.Length.Duration().Seconds(), maxMs, payload)
}

func (l *HlogWriter) printf(format string, args ...any) {
	if l.err == nil {
		_, l.err = fmt.Fprintf(l.w, format, args...)
	}
}
