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

func (e *engine) runEvloop(options, []string, []scenario.Requester) (*measure.Step, error) {
	panic("evloop: not supported on this system")
}

func (e *engine) runOpenEvloop(options, []string, []scenario.Requester) (*measure.Step, error) {
	panic("evloop: not supported on this system")
}
