package conditions

import (
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/procfs"
)

// DefaultInterval is how often a Session samples the machine during a step.
const DefaultInterval = time.Second

// Session records a run's conditions: the generator and the target it is made with, and
// the machine around each step (Begin). Its zero value is not usable: see NewSession.
type Session struct {
	// Interval is how often a step is sampled (0: DefaultInterval); OthersMax is the
	// highest mean over one interval.
	Interval time.Duration
	// TargetPID is the target's process (0: unknown); its CPU is not counted as others'.
	TargetPID int
	// TargetLocal says the target runs on this machine (a loopback address): without its
	// PID, the others' CPU includes it.
	TargetLocal bool

	mu  sync.Mutex
	rec Record
}

// NewSession starts the record of a run on generator g with target t (nil: unknown).
func NewSession(g Generator, t *Target) *Session {
	s := &Session{rec: Record{Version: Version, Generator: g, Target: t}}
	if t != nil {
		s.TargetPID = t.PID
	}
	return s
}

// Record returns the conditions recorded so far.
func (s *Session) Record() *Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rec
	r.Steps = append([]StepSample(nil), s.rec.Steps...)
	return &r
}

// reading is one sample of the machine, apiperf and the target.
type reading struct {
	at      time.Time
	machine procfs.Machine
	self    time.Duration
	target  time.Duration
	ok      bool // machine and self were read
	tok     bool // the target was read
}

func (s *Session) read() reading {
	r := reading{at: time.Now()}
	m, err := procfs.ReadMachine()
	self, err2 := procfs.Read(os.Getpid())
	r.machine, r.self, r.ok = m, self.CPU, err == nil && err2 == nil
	if s.TargetPID > 0 && s.TargetPID != os.Getpid() {
		if t, err := procfs.Read(s.TargetPID); err == nil {
			r.target, r.tok = t.CPU, true
		}
	}
	return r
}

// between is the machine from reading a to reading b: busy, apiperf's, the target's (nil
// unknown) and the others' CPU, in cores, and the steal share in percent.
func (s *Session) between(a, b reading) (busy, self float64, target *float64, others, stealPct float64) {
	use := b.machine.Since(a.machine)
	secs := b.at.Sub(a.at).Seconds()
	if secs <= 0 {
		return 0, 0, nil, 0, 0
	}
	self = (b.self - a.self).Seconds() / secs
	known := []float64{self}
	if a.tok && b.tok {
		t := (b.target - a.target).Seconds() / secs
		target = &t
		known = append(known, t)
	} else if s.TargetPID > 0 && s.TargetPID == os.Getpid() {
		zero := 0.0 // the target is apiperf itself (a test's in-process server): counted once
		target = &zero
	}
	return use.Busy, self, target, use.Others(known...), 100 * use.StealShare()
}

// Begin starts sampling the machine for the step label, repetition rep; the function it
// returns ends the sampling and records the step (nothing for a nil step: a failed one),
// with apiperf's run-queue wait from the step's generator figures.
func (s *Session) Begin(label string, rep int) func(*measure.Step) {
	s.mu.Lock()
	if len(s.rec.Steps) == 0 {
		s.rec.Generator.GOMAXPROCS = runtime.GOMAXPROCS(0) // a sweep sets it from -t
	}
	s.mu.Unlock()
	every := s.Interval
	if every <= 0 {
		every = DefaultInterval
	}
	first := s.read()
	stop := make(chan struct{})
	done := make(chan StepSample, 1)
	go func() {
		st := StepSample{Label: label, Rep: rep}
		prev, end := first, first
		tick := time.NewTicker(every)
		defer tick.Stop()
		for last := false; !last; {
			select {
			case <-tick.C:
			case <-stop:
				last = true
			}
			r := s.read()
			if !r.ok && first.ok {
				// A failed read (a step that holds every file descriptor apiperf may open)
				// is skipped: the next interval runs from the last reading that worked.
				continue
			}
			end = r
			// A last interval much shorter than the others (the step ended just after a
			// tick) is too few clock ticks for a rate: it counts in the mean only.
			if prev.ok && end.ok && (end.at.Sub(prev.at) >= every/4 || st.Samples == 0) {
				_, _, _, others, _ := s.between(prev, end)
				st.OthersMax = max(st.OthersMax, others)
				st.Samples++
			}
			prev = end
		}
		if first.ok && end.ok {
			st.Seconds = end.at.Sub(first.at).Seconds()
			st.Busy, st.Apiperf, st.Target, st.Others, st.StealPct = s.between(first, end)
			st.OthersMax = max(st.OthersMax, st.Others)
		}
		st.OthersHasTarget = st.Target == nil && s.TargetLocal
		done <- st
	}()
	return func(m *measure.Step) {
		close(stop)
		st := <-done
		if m == nil || st.Samples == 0 {
			return
		}
		st.RunWait = m.Generator.RunWaitCores()
		s.mu.Lock()
		s.rec.Steps = append(s.rec.Steps, st)
		s.mu.Unlock()
	}
}
