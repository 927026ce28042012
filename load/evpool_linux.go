//go:build linux

package load

import (
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/apiperf/apiperf/scenario"
)

// openPool is an open loop's connections: the free ones, in the order they came free, the
// busy ones, and the growth of the pool when a backlog is the target's doing.
type openPool struct {
	free     connRing
	busy     int          // connections with a request (connecting, writing or reading)
	growing  int          // connections opening for the backlog, without a request yet
	dialing  int          // connections connecting (the loop waits for their readiness, not a fixed time)
	noFreeAt int64        // the last time a due request found no free connection
	growAt   int64        // the pool's growth is considered again at this time
	noGrow   bool         // a requester for a new connection could not be made
	predial  bool         // the initial pool is opening (dialPool): connects are not the schedule's
	backlog  backlogWatch // whether a backlog is the target's doing: then the pool grows
	rt       int64        // the response time (meanRT)
	inFlight atomic.Int64
	thread   int
	shared   *sharedPool // what the run's loops share of the pool
}

// sharedPool is what the event loops of an open-loop run share of the pool.
type sharedPool struct {
	size  atomic.Int64 // connections in the pool
	ids   atomic.Int64 // ids given to connections
	reqMu sync.Mutex   // serializes src.Requester for connections added while running
}

// release makes c, whose requests are all answered or failed, free.
func (p *openPool) release(c *econn) {
	p.busy--
	p.free.push(c)
}

// opened takes c, just opened for the backlog (it has no request yet), as free.
func (p *openPool) opened(c *econn) {
	p.growing--
	p.free.push(c)
}

// wanted is how many connections to open at now for a backlog of waiting requests, less
// those already opening for it (backlogWatch.grow).
func (p *openPool) wanted(now, waiting int64) int64 {
	return p.backlog.grow(now, waiting-int64(p.growing), p.rt)
}

// requester makes the requester of a new connection of the pool, and gives it its number.
func (p *openPool) requester(src scenario.Source) (scenario.Requester, int, error) {
	p.shared.reqMu.Lock()
	defer p.shared.reqMu.Unlock()
	num := int(p.shared.ids.Add(1) - 1)
	r, err := src.Requester(p.thread, num)
	return r, num, err
}

// addConn adds connection num, not yet open, to the loop's pool, and sizes the loop's
// quantum to the pool.
func (o *openLoop) addConn(r scenario.Requester, num int) *econn {
	l := o.l
	c := l.addConn(r, num, -1)
	o.setQuantum(float64(o.step)*float64(time.Second)/l.e.cfg.Rate, len(l.conns))
	return c
}

// dialPool opens the loop's first connections before the clock starts, as wrk2 does, TLS
// handshakes included. A failure is not recorded here: the first request on that
// connection connects again and counts it. It runs on the loop's epoll set, from which
// an io_uring takes the connections (choosePoller).
func (o *openLoop) dialPool() {
	l := o.l
	t0 := time.Now()
	for _, c := range l.conns {
		fd, err := o.socket()
		if err != nil {
			continue
		}
		c.fd, c.state, c.start = fd, cConnecting, l.e.now()
		if l.ep.connecting(c) != nil {
			l.closeFD(c)
			c.state = cIdle
		}
	}
	o.predial = true
	for l.opening() {
		l.startHandshakes()
		left := l.e.timeout - time.Since(t0)
		if left <= 0 {
			break
		}
		n, err := l.ep.dialWait(int((left + time.Millisecond - 1) / time.Millisecond))
		if err != nil && err != syscall.EINTR {
			break
		}
		for i := range n {
			c, hup := l.ep.got(i)
			if c == nil {
				continue
			}
			switch c.state {
			case cConnecting:
				c.state = cIdle
				soerr, err := syscall.GetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
				if err != nil || soerr != 0 || l.ep.connected(c) != nil {
					l.closeFD(c)
					continue
				}
				if c.tls != nil {
					l.handshake(c) // counted once it is done (opened)
					continue
				}
				l.e.conns.Add(1)
				l.e.connTime.Add(int64(time.Since(t0)))
			case cHandshake:
				l.tlsEvent(c, hup)
			}
		}
	}
	o.predial = false
	for _, c := range l.conns {
		if c.state == cConnecting || c.state == cHandshake {
			l.closeFD(c)
			c.state = cIdle
		}
		o.free.push(c)
	}
}

// opening reports whether a connection of the initial pool is still connecting or in its
// handshake.
func (l *evloop) opening() bool {
	for _, c := range l.conns {
		if c.state == cConnecting || c.state == cHandshake {
			return true
		}
	}
	return false
}

// socket makes a non-blocking TCP socket and starts connecting it to the target.
func (o *openLoop) socket() (int, error) {
	l := o.l
	fd, err := l.newSocket()
	if err != nil {
		return -1, err
	}
	if o.stampable && !stampConn(fd) {
		o.stampable = false
	}
	if err := syscall.Connect(fd, l.sa); err != nil && err != syscall.EINPROGRESS {
		syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

// grow opens connections while requests due more than lateThreshold ago wait for one, up
// to the run's MaxConns, unless the generator is short of CPU.
func (o *openLoop) grow(now int64) {
	l := o.l
	if now < o.growAt || o.noGrow || l.e.stop.Load() {
		return
	}
	o.growAt = now + int64(growCheck)
	o.checkStarved(now)
	if o.starved {
		return
	}
	for n := o.wanted(now, o.dueBy(now-int64(lateThreshold))-o.k); n > 0 && o.shared.claim(l.e.cfg.MaxConns()); n-- {
		r, num, err := o.requester(l.e.src)
		if err != nil {
			o.shared.size.Add(-1)
			o.noGrow = true
			return
		}
		c := o.addConn(r, num)
		o.growing++
		o.dial(c)
	}
}

// claim takes a place in the pool, if it holds fewer than max connections.
func (p *sharedPool) claim(max int) bool {
	for {
		n := p.size.Load()
		if n >= int64(max) {
			return false
		}
		if p.size.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// connRing is a FIFO of free connections.
type connRing struct {
	buf  []*econn
	head int
	n    int
}

func (r *connRing) push(c *econn) {
	if r.n == len(r.buf) {
		buf := make([]*econn, max(2*len(r.buf), 16))
		for i := 0; i < r.n; i++ {
			buf[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = buf, 0
	}
	r.buf[(r.head+r.n)%len(r.buf)] = c
	r.n++
}

func (r *connRing) pop() *econn {
	if r.n == 0 {
		return nil
	}
	c := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	return c
}
