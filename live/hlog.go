package live

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/outfile"
)

// intervalLog is one open .hlog file of a session.
type intervalLog struct {
	f      *os.File
	w      *measure.HlogWriter
	name   string
	failed bool
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._=-]+`)

// levelLog returns the log of the level named label in HlogDir, opening it the first time;
// a level measured again later (a repetition, a confirming probe) appends to its log.
// Called with s.mu held.
func (s *Session) levelLog(label string) *intervalLog {
	name := filepath.Join(s.cfg.HlogDir, unsafeName.ReplaceAllString(label, "_")+".hlog")
	if l, ok := s.logs[name]; ok {
		return l
	}
	if s.logs == nil {
		s.logs = map[string]*intervalLog{}
	}
	if err := os.MkdirAll(s.cfg.HlogDir, 0o755); err != nil {
		s.errs = append(s.errs, fmt.Errorf("interval log: %w", err))
		return nil
	}
	f, err := outfile.Create(name)
	if err != nil {
		s.errs = append(s.errs, fmt.Errorf("interval log: %w", err))
		return nil
	}
	l := &intervalLog{f: f, w: measure.NewHlogWriter(f), name: name}
	s.logs[name] = l
	return l
}

// note keeps the first write error of the log.
func (l *intervalLog) note(s *Session, err error) {
	if err != nil && !l.failed {
		l.failed = true
		s.errs = append(s.errs, fmt.Errorf("interval log %s: %w", l.name, err))
	}
}

// closeLogs closes every interval log.
func (s *Session) closeLogs() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.logs {
		if err := l.f.Close(); err != nil {
			s.errs = append(s.errs, fmt.Errorf("interval log %s: %w", l.name, err))
		}
	}
	s.logs, s.log = nil, nil
}
