package live

import "github.com/apiperf/apiperf/measure"

// Feed returns the function that gives the session a step's intervals from elsewhere than
// the local engine (a scale-out coordinator's merged intervals), as Options does for the
// engine; nil when nothing watches.
func (s *Session) Feed() func(*measure.Interval) {
	if s == nil || (s.view == nil && s.metrics == nil && s.log == nil && s.cfg.HlogDir == "") {
		return nil
	}
	return func(iv *measure.Interval) {
		s.mu.Lock()
		st := s.cur
		s.mu.Unlock()
		s.interval(st, iv, iv.Index == 0)
	}
}
