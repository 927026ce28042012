package target

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
)

func TestStallSchedule(t *testing.T) {
	s := start(t, Config{Stall: 300 * time.Millisecond, StallEvery: 900 * time.Millisecond})
	sched := s.StallSchedule()
	if sched.Stall != 300*time.Millisecond || sched.Every != 900*time.Millisecond || !sched.Start.Equal(s.Started()) {
		t.Fatalf("StallSchedule() = %+v, want 300ms every 900ms from Started()", sched)
	}
	// probe sends one request and checks it was answered no earlier than the schedule
	// releases its send time, and not absurdly later.
	probe := func(what string) (sent, got time.Time) {
		sent = time.Now()
		code, _, _ := get(t, s.URL()+"/healthz")
		got = time.Now()
		release := sched.Release(sent)
		if code != 200 || got.Before(release) || got.Sub(release) > 500*time.Millisecond {
			t.Errorf("%s: sent at +%v, answered %d at +%v; want 200 at or soon after +%v",
				what, sent.Sub(sched.Start), code, got.Sub(sched.Start), release.Sub(sched.Start))
		}
		return sent, got
	}
	// Right after start we are in the first stall [0, 300ms): held to its end.
	if _, got := probe("first stall"); got.Sub(sched.Start) < 300*time.Millisecond {
		t.Errorf("first probe answered at +%v, inside the first stall", got.Sub(sched.Start))
	}
	// Between stalls [300ms, 900ms) answers come at once.
	time.Sleep(time.Until(sched.Start.Add(450 * time.Millisecond)))
	probe("between stalls")
	// The second stall [900ms, 1200ms) holds answers to its end.
	time.Sleep(time.Until(sched.Start.Add(950 * time.Millisecond)))
	if _, got := probe("second stall"); got.Sub(sched.Start) < 1200*time.Millisecond {
		t.Errorf("second-stall probe answered at +%v, before the stall ended at +1.2s", got.Sub(sched.Start))
	}
}

// The rate ceiling holds within 10%: a timing test (the serial pass), as it asserts a rate.
func TestTimingMaxRPSCeiling(t *testing.T) {
	testenv.Timing(t)
	const rps = 250
	s := start(t, Config{MaxRPS: rps})
	var ok, bad atomic.Int64
	deadline := time.Now().Add(2 * time.Second)
	begin := time.Now()
	var wg sync.WaitGroup
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	for range 8 { // 8 requests in flight keep the server's queue non-empty
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 10_000 && time.Now().Before(deadline); n++ {
				resp, err := c.Get(s.URL() + "/healthz")
				if err != nil || resp.StatusCode != 200 {
					bad.Add(1)
				} else {
					ok.Add(1)
				}
				if err == nil {
					resp.Body.Close()
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(begin)
	got := float64(ok.Load()) / elapsed.Seconds()
	t.Logf("max-rps %d: %d ok, %d failed in %v = %.1f req/s", rps, ok.Load(), bad.Load(), elapsed, got)
	if bad.Load() != 0 {
		t.Errorf("max-rps: %d requests failed; over the limit they must wait, not fail", bad.Load())
	}
	if got < rps*0.9 || got > rps*1.1 {
		t.Errorf("max-rps %d: served %.1f req/s, want within 10%%", rps, got)
	}
}
