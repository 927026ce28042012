//go:build !linux

package load

import (
	"net"
	"sync/atomic"
	"syscall"
)

// h2loopSupported says the event loops can run HTTP/2 here: not on this system, where each
// HTTP/2 connection runs on a goroutine of its own.
const h2loopSupported = false

var h2LoopCoros atomic.Int64

type h2loop struct{}

type h2coro struct{}

func (e *engine) makeH2Loops() ([]*h2loop, error) { return nil, nil }

func (l *h2loop) coro(body, done func()) *h2coro { panic("h2loop: not supported on this system") }

func (l *h2loop) seal() {}

func (l *h2loop) run() {}

func closeH2Loops([]*h2loop) {}

func (co *h2coro) start() {}

func (co *h2coro) sleepUntil(*engine, int64) {}

func (co *h2coro) dialConn(*engine) (net.Conn, syscall.RawConn, error) {
	panic("h2loop: not supported")
}
