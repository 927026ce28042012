package load

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/apiperf/apiperf/scenario"
)

// dialer opens connections to the target. Connections are opened by a small pool of
// goroutines (start/stop), so the deep stacks of dialing and TLS handshakes grow there and
// not in each of thousands of connection goroutines, which stay small.
type dialer struct {
	target scenario.Target
	tls    *tls.Config
	nd     net.Dialer
	jobs   chan chan dialResult
	wg     sync.WaitGroup
	tlsErr tlsFailure // why handshakes failed (tlsfail.go)
	// secrets are the TLS 1.2 master secrets of the sessions the cache holds, for the event
	// loops' record opener (evtlsrec_linux.go).
	secrets sessionSecrets
	// source gives the local address of each connection (nil: the kernel chooses); raddr
	// is then the target's resolved address, of the local addresses' family.
	source func() netip.Addr
	raddr  string
}

type dialResult struct {
	nc  net.Conn
	rc  syscall.RawConn
	err error
}

// maxDialers is the size of the dialing pool.
const maxDialers = 64

// start runs n dialing goroutines until stop.
func (d *dialer) start(ctx context.Context, n int) {
	d.jobs = make(chan chan dialResult)
	for range min(max(n, 1), maxDialers) {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			for reply := range d.jobs {
				nc, rc, err := d.dial(ctx)
				reply <- dialResult{nc, rc, err}
			}
		}()
	}
}

// stop ends the dialing goroutines once every request for a connection has been answered.
func (d *dialer) stop() {
	close(d.jobs)
	d.wg.Wait()
}

// viaPool asks the pool for a connection; reply is the caller's own channel (buffered, 1).
func (d *dialer) viaPool(ctx context.Context, reply chan dialResult) (net.Conn, syscall.RawConn, error) {
	select {
	case d.jobs <- reply:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	r := <-reply
	return r.nc, r.rc, r.err
}

func newDialer(t scenario.Target, cfg Config) *dialer {
	d := &dialer{target: t}
	d.nd.Timeout = cfg.Timeout.Duration()
	if t.Scheme == "https" {
		protos := []string{"http/1.1"}
		if cfg.HTTP2 {
			protos = []string{"h2", "http/1.1"} // offered both so a server without h2 says so
		}
		d.tls = &tls.Config{
			ServerName:         t.Host,
			InsecureSkipVerify: cfg.Insecure, // only when the user asked with -k
			NextProtos:         protos,
			ClientSessionCache: tls.NewLRUClientSessionCache(64),
		}
	}
	return d
}

// useLocalAddrs makes the dialer open each connection from the address next gives, bound
// before its connect with IP_BIND_ADDRESS_NO_PORT, when the plan has addresses.
func (d *dialer) useLocalAddrs(p LocalAddrPlan, next func() netip.Addr) {
	if len(p.Addrs) == 0 {
		return
	}
	port, err := net.LookupPort("tcp", d.target.Port)
	if err != nil {
		return // the dial will say so
	}
	d.source, d.raddr = next, netip.AddrPortFrom(p.Target, uint16(port)).String()
}

// dial connects; for TLS it also completes the handshake.
func (d *dialer) dial(ctx context.Context) (net.Conn, syscall.RawConn, error) {
	nc, err := d.dialTCP(ctx)
	if err != nil {
		return nil, nil, err
	}
	if d.tls == nil {
		rc, err := nc.(syscall.Conn).SyscallConn()
		if err != nil {
			nc.Close()
			return nil, nil, fmt.Errorf("raw connection: %w", err)
		}
		return nc, rc, nil
	}
	tc, err := d.handshake(ctx, nc, true)
	if err != nil {
		return nil, nil, err
	}
	return tc, nil, nil
}

// dialTCP opens a TCP connection to the target (from the next local address, when the plan
// has them), with TCP_NODELAY.
func (d *dialer) dialTCP(ctx context.Context) (net.Conn, error) {
	nd, addr := &d.nd, d.target.Address
	if d.source != nil {
		bound := d.nd
		bound.LocalAddr = &net.TCPAddr{IP: d.source().AsSlice()}
		bound.Control = noPortControl
		nd, addr = &bound, d.raddr
	}
	nc, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	return nc, nil
}

// handshake runs TLS's client handshake over nc within the dial's timeout; with watch, the
// end of the run (ctx) interrupts it by closing nc. An HTTP/2 loop's connection is not
// watched so (only its coroutine closes it): the timeout is its deadline, and its waits end
// with the run. A failure closes nc and is noted, unless the run is ending.
func (d *dialer) handshake(ctx context.Context, nc net.Conn, watch bool) (*tls.Conn, error) {
	tc := tls.Client(nc, d.tls)
	hctx := context.Background()
	if watch {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(ctx, d.nd.Timeout)
		defer cancel()
	} else {
		_ = nc.SetDeadline(time.Now().Add(d.nd.Timeout))
	}
	if err := tc.HandshakeContext(hctx); err != nil {
		nc.Close()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = context.DeadlineExceeded // the handshake's timeout, whichever way it was kept
		}
		if ctx.Err() == nil {
			d.tlsErr.note(d.target.Address, err)
		}
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	if !watch {
		_ = nc.SetDeadline(time.Time{})
	}
	return tc, nil
}
