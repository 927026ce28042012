package load

import (
	"time"

	"github.com/apiperf/apiperf/measure"
)

// Streams measured as streams, on every path: a gRPC server stream's messages (HTTP/2) or
// the events of a text/event-stream response (HTTP/1.1 and HTTP/2), each timed as it
// completes: the first one from the stream's send (open loop: from when it was due), the
// others from the one before (gaps). The path counts the messages as their bytes arrive (on
// HTTP/1.1 the parser does) and calls arrived with the time they came; the response's sample
// takes the count and the first one's time (sampleBatch.stream).

// gapBatch is how many gaps a batch collects before handing them to its recorder, and
// gapHold how long it holds the oldest of them.
const (
	gapBatch = 256
	gapHold  = int64(100 * time.Millisecond)
)

// streamTimes is when the first and the latest message of one stream completed.
type streamTimes struct {
	first, last int64
}

// arrived times messages before..count-1 of the stream (0 is its first), which completed at
// now: the first one's time is kept, the others' gaps go to b, but those that ended before
// the measured window (from).
func (t *streamTimes) arrived(b *sampleBatch, before, count int32, now, from int64) {
	for n := before; n < count; n++ {
		if n == 0 {
			t.first = now
		} else if now >= from {
			b.gap(now-t.last, now)
		}
		t.last = now
	}
}

// streamKind names the streams of a run for its record.
func (e *engine) streamKind() string {
	if e.target.GRPC {
		return "grpc"
	}
	return "sse"
}

// stream marks s, the sample of the response p just parsed, a stream of events when it was
// an event stream (due: when it was due).
func (p *parser) stream(s *measure.Sample, b *sampleBatch, due int64) {
	if p.sse {
		b.stream(s, p.events, p.times, due)
	}
}
