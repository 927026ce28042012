package target

import (
	"sync"
	"time"
)

// limiter is the --max-rps ceiling: a scheduler that hands out one start slot every
// 1/rate seconds. A request takes the next free slot (never earlier than now) and waits
// for it, so requests over the limit queue instead of failing, and while the queue is
// non-empty exactly rate requests start per second, whatever the timer latency.
// There is no burst: idle time is not saved up.
type limiter struct {
	interval time.Duration
	mu       sync.Mutex
	next     time.Time
}

func newLimiter(rps float64) *limiter {
	if rps <= 0 {
		return nil
	}
	iv := time.Duration(float64(time.Second) / rps)
	if iv <= 0 {
		iv = 1
	}
	return &limiter{interval: iv}
}

// reserve returns the start time of the next slot at or after now and books it.
func (l *limiter) reserve(now time.Time) time.Time {
	l.mu.Lock()
	slot := l.next
	if slot.Before(now) {
		slot = now
	}
	l.next = slot.Add(l.interval)
	l.mu.Unlock()
	return slot
}
