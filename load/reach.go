package load

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultConnectGrace is how long a run may go without opening a single connection before
// apiperf checks whether the target can be reached at all; when a plain dial fails too, the
// run stops there, as wrk does ("unable to connect to 127.0.0.1:1: connection refused").
const DefaultConnectGrace = time.Second

// UnreachablePrefix starts the warning of a run stopped because the target cannot be reached.
const UnreachablePrefix = "unable to connect to "

// reachWatch stops a run whose target cannot be reached. It is owned by Run: stop ends it.
type reachWatch struct {
	timer  *time.Timer
	cancel context.CancelFunc
	wg     sync.WaitGroup
	reason atomic.Pointer[string]
	dialed atomic.Bool // the stop came from a failed plain dial (not from TLS)
}

// watchReach checks the target after grace unless a connection was opened by then.
func (e *engine) watchReach(grace time.Duration) *reachWatch {
	ctx, cancel := context.WithCancel(e.ctx)
	r := &reachWatch{cancel: cancel}
	r.wg.Add(1)
	r.timer = time.AfterFunc(grace, func() {
		defer r.wg.Done()
		if e.conns.Load() > 0 || e.stop.Load() {
			return
		}
		if r.check(ctx, e) {
			e.stop.Store(true)
			e.stopDial()
		}
	})
	return r
}

// check dials the target once and notes why it cannot be reached; true when it cannot.
func (r *reachWatch) check(ctx context.Context, e *engine) bool {
	if e.dial.tlsErr.warning() != "" {
		// Every handshake failed: the certificate will not change during the run.
		why := "no TLS connection"
		r.reason.Store(&why)
		return true
	}
	d := net.Dialer{Timeout: e.timeout}
	c, err := d.DialContext(ctx, "tcp", e.target.Address)
	if err == nil {
		c.Close()
		return false
	}
	if ctx.Err() != nil || e.conns.Load() > 0 {
		return false
	}
	why := UnreachablePrefix + e.target.Address + ": " + dialReason(err)
	r.dialed.Store(true)
	r.reason.Store(&why)
	return true
}

// atEnd checks, once the run is over, a target to which no connection was opened before
// the watch could (a run shorter than the grace, such as a warmup), so it says why.
func (r *reachWatch) atEnd(e *engine) {
	r.stop()
	if e.conns.Load() > 0 || r.reason.Load() != nil || e.cancel.Load() || e.ctx.Err() != nil {
		return
	}
	r.check(e.ctx, e)
}

// stop ends the watch and waits for a check under way.
func (r *reachWatch) stop() {
	r.cancel()
	if r.timer.Stop() {
		r.wg.Done() // the check never ran
	}
	r.wg.Wait()
}

// warning is the reason the run stopped early, or "".
func (r *reachWatch) warning() string {
	if p := r.reason.Load(); p != nil {
		return *p
	}
	return ""
}

// unreachable says the run stopped because a plain dial to the target failed.
func (r *reachWatch) unreachable() bool { return r.dialed.Load() }

// dialReason is the heart of a dial error: "connection refused", "no such host", "i/o timeout".
func dialReason(err error) string {
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err.Error()
	}
	var de *net.DNSError
	if errors.As(err, &de) {
		return de.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err.Error()
	}
	return err.Error()
}
