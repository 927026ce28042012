//go:build !linux

package load

import (
	"sync/atomic"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

const evloopSupported = false

// ringRuns counts the event loops that ran on an io_uring: none here.
var ringRuns atomic.Int64

type evloop struct {
	samples sampleBatch
	useRing bool
}

func (e *engine) newEvloops(reqs []scenario.Requester, budgets []int64) ([]*evloop, error) {
	panic("evloop: not supported on this system")
}

func (l *evloop) run() {}

func (e *engine) runOpenEvloop(options, []string, []scenario.Requester) (*measure.Step, error) {
	panic("evloop: not supported on this system")
}

func (l *evloop) interrupt() {}

func (l *evloop) inFlight() int64 { return 0 }
