package load

import (
	"time"

	"github.com/apiperf/apiperf/measure"
)

// maxBatchAge is how long a sample may wait in a batch before it is handed over, so live
// progress and the timeline never lag by more.
const maxBatchAge = int64(250 * time.Millisecond)

// sampleBatch collects the samples of one connection (goroutine workers) or one event loop
// and hands them to its thread's recorder in batches, so the recorder's lock is taken once
// per batch, not per request.
type sampleBatch struct {
	rec      *measure.Recorder
	buf      []measure.Sample // len is the batch size; n of them are filled
	extra    []measure.Extra  // beside buf: what its samples carry besides timing (nil until one does)
	gaps     []int64          // gaps between streams' messages not yet recorded (stream.go)
	gapEnds  []int64          // when each of gaps ended
	n        int
	flushed  int64 // when the batch was last handed over
	lastDone int64 // when the latest attempt ended (the measured window ends at the latest)
}

func newSampleBatch(rec *measure.Recorder, size int) sampleBatch {
	return sampleBatch{rec: rec, buf: make([]measure.Sample, size)}
}

// add appends s, handing the batch over when it is full or its oldest sample is too old.
func (b *sampleBatch) add(s measure.Sample) {
	b.buf[b.n] = s
	b.n++
	b.lastDone = s.Done
	if b.n == len(b.buf) || s.Done-b.flushed > maxBatchAge {
		b.flush(s.Done)
	}
}

// extras puts trace id tr and Server-Timing t beside s, in the Extra of the slot the next add
// fills, when s has either: a run without --traceparent and without Server-Timing in its
// responses carries none (s.X nil), and the Extras are made when the first response needs one.
func (b *sampleBatch) extras(s *measure.Sample, tr measure.TraceID, t *measure.Timings) {
	if tr.IsZero() && t.Empty() {
		s.X = nil
		return
	}
	s.X = b.slot()
	*s.X = measure.Extra{Trace: tr, Timing: *t}
}

// stream marks s a streamed response of messages messages, timed t, due at due, in the Extra
// beside it (made when s has none yet): the time to its first message is from due.
func (b *sampleBatch) stream(s *measure.Sample, messages int32, t streamTimes, due int64) {
	if s.X == nil {
		s.X = b.slot()
		*s.X = measure.Extra{}
	}
	var first int64
	if messages > 0 {
		first = max(t.first-due, 1)
	}
	s.X.Stream, s.X.Messages, s.X.First = true, messages, first
}

// gap collects the gap g between two messages of a stream, which ended at end, handing the
// gaps over when gapBatch are there or the oldest has waited gapHold (so that the live
// intervals have them).
func (b *sampleBatch) gap(g, end int64) {
	if b.gaps == nil {
		b.gaps, b.gapEnds = make([]int64, 0, gapBatch), make([]int64, 0, gapBatch)
	}
	b.gaps, b.gapEnds = append(b.gaps, g), append(b.gapEnds, end)
	if len(b.gaps) == gapBatch || end-b.gapEnds[0] >= gapHold {
		b.flushGaps()
	}
}

// flushGaps hands the gaps collected to the recorder.
func (b *sampleBatch) flushGaps() {
	b.rec.AddGaps(b.gapEnds, b.gaps)
	b.gaps, b.gapEnds = b.gaps[:0], b.gapEnds[:0]
}

// slot is the Extra of the slot the next add fills; the Extras are made when first needed.
func (b *sampleBatch) slot() *measure.Extra {
	if b.extra == nil {
		b.extra = make([]measure.Extra, len(b.buf))
	}
	return &b.extra[b.n]
}

// flush hands the collected samples and gaps over; now is the current time since the step's
// start.
func (b *sampleBatch) flush(now int64) {
	if b.n > 0 {
		b.rec.Add(b.buf[:b.n])
		b.n = 0
	}
	if len(b.gaps) > 0 {
		b.flushGaps()
	}
	b.flushed = now
}
