package target

import (
	"net"
	"sync"
	"sync/atomic"
)

// connLimit is the --max-conns listener: it accepts every connection, but one that would
// be more than max open at once is reset at once (closed with SO_LINGER 0), as a proxy at
// its connection limit or a server out of file descriptors treats it. Clients see a reset
// where they expected a response; the connections within the limit are served as usual.
type connLimit struct {
	net.Listener
	max     int64
	open    atomic.Int64
	refused atomic.Int64
}

func newConnLimit(ln net.Listener, max int) net.Listener {
	if max <= 0 {
		return ln
	}
	return &connLimit{Listener: ln, max: int64(max)}
}

// Accept returns the next connection within the limit, resetting those beyond it.
func (l *connLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			l.refused.Add(1)
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			c.Close()
			continue
		}
		return &limitedConn{Conn: c, l: l}, nil
	}
}

// limitedConn gives its slot back when closed, once.
type limitedConn struct {
	net.Conn
	l    *connLimit
	once sync.Once
}

func (c *limitedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}
