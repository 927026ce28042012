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

// The clock's queue gives back wake-up times in order whatever the order they were pushed in.
func TestClockQueueOrder(t *testing.T) {
	c := &clock{}
	in := []int64{50, 10, 40, 10, 30, 20, 60, 5, 45}
	for _, d := range in {
		c.push(waiter{at: d})
	}
	c.pop() // 5
	c.push(waiter{at: 1})
	var out []int64
	for len(c.q) > 0 {
		out = append(out, c.pop().at)
	}
	if want := []int64{1, 10, 10, 20, 30, 40, 45, 50, 60}; !slices.Equal(out, want) {
		t.Errorf("popped %v, want %v", out, want)
	}
}

// Where wake-ups come late (a virtual machine slow to wake an idle vCPU), the clock wakes its
// workers earlier, twice as early as they have been late, within its cap; a wake-up of a
// machine short of CPU (over starvedWait late) does not move it.
func TestClockEarlyFollowsWakeLag(t *testing.T) {
	e := &engine{ctx: context.Background(), base: time.Now()}
	e.cfg.Rate = 500
	c := newClock(e)
	if c == nil {
		t.Skip("no timerfd")
	}
	defer c.close()
	wait := func() {
		if !c.wait(context.Background(), e.now()+int64(2*time.Millisecond), make(chan struct{}, 1)) {
			t.Fatal("wait returned false without cancellation")
		}
	}
	c.wakeLag.Store(0)
	wait()
	if c.early != clockEarly {
		t.Errorf("early = %v with prompt wake-ups, want %v", time.Duration(c.early), time.Duration(clockEarly))
	}
	for range 100 {
		c.woke(int64(5 * time.Millisecond)) // the machine's shortage, not the wake-up's cost
	}
	if lag := c.wakeLag.Load(); lag > int64(time.Millisecond) {
		t.Errorf("wake lag %v after wake-ups over starvedWait late, want them ignored", time.Duration(lag))
	}
	for range 100 {
		c.woke(int64(180 * time.Microsecond))
	}
	c.wakeLag.Store(int64(180 * time.Microsecond))
	wait()
	want := min(clockEarlyCap(e.cfg.Rate), int64(360*time.Microsecond))
	if c.early != want {
		t.Errorf("early = %v after wake-ups 180us late, want %v (twice the lag, within the cap %v)",
			time.Duration(c.early), time.Duration(want), time.Duration(clockEarlyCap(e.cfg.Rate)))
	}
	if got := clockEarlyCap(1e6); got != clockEarly {
		t.Errorf("cap at 1M req/s = %v, want the floor %v", time.Duration(got), time.Duration(clockEarly))
	}
	if got := clockEarlyCap(10); got != int64(time.Millisecond) {
		t.Errorf("cap at 10 req/s = %v, want 1ms", time.Duration(got))
	}
}
