//go:build !linux

package load

import "github.com/apiperf/apiperf/scenario"

const evloopSupported = false

type evloop struct{ samples sampleBatch }

func (e *engine) newEvloops(reqs []scenario.Requester, budgets []int64) ([]*evloop, error) {
	panic("evloop: not supported on this system")
}

func (l *evloop) run() {}
