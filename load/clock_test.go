//go:build linux

package load

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// The clock wakes each waiter at its due time (never before), whatever the order they came
// in; a waiter whose context ends returns false and leaves nothing behind for the next wait.
func TestClockWakesInDueOrder(t *testing.T) {
	e := &engine{ctx: context.Background(), base: time.Now()}
	c := newClock(e)
	if c == nil {
		t.Skip("no timerfd")
	}
	defer c.close()
	dues := []time.Duration{30, 10, 20, 10, 50, 40} // ms, out of order, one twice
	var mu sync.Mutex
	var woken []time.Duration
	var wg sync.WaitGroup
	for _, d := range dues {
		wg.Add(1)
		go func() {
			defer wg.Done()
			due := int64(d * time.Millisecond)
			if !c.wait(context.Background(), due, make(chan struct{}, 1)) {
				t.Errorf("wait(%v) = false without cancellation", d)
			}
			now := e.now()
			if now < due {
				t.Errorf("wait(%v) returned %v early", d, time.Duration(due-now))
			}
			mu.Lock()
			woken = append(woken, d)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(woken) != len(dues) {
		t.Errorf("woke %v, want every waiter of %v", woken, dues)
	}

	wake := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(5*time.Millisecond, cancel)
	if c.wait(ctx, e.now()+int64(time.Hour), wake) {
		t.Error("wait for an hour returned true after its context was cancelled")
	}
	start := e.now()
	if !c.wait(context.Background(), start+int64(20*time.Millisecond), wake) || e.now()-start < int64(20*time.Millisecond) {
		t.Errorf("a wait after a cancelled one returned after %v, want 20ms", time.Duration(e.now()-start))
	}
}

// The clock's queue gives back due times in order whatever the order they were pushed in.
func TestClockQueueOrder(t *testing.T) {
	c := &clock{}
	in := []int64{50, 10, 40, 10, 30, 20, 60, 5, 45}
	for _, d := range in {
		c.push(waiter{due: d})
	}
	c.pop() // 5
	c.push(waiter{due: 1})
	var out []int64
	for len(c.q) > 0 {
		out = append(out, c.pop().due)
	}
	if want := []int64{1, 10, 10, 20, 30, 40, 45, 50, 60}; !slices.Equal(out, want) {
		t.Errorf("popped %v, want %v", out, want)
	}
}
