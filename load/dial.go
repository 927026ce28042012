package load

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"syscall"

	"github.com/apiperf/apiperf/scenario"
)

// dialer opens connections to the target.
type dialer struct {
	target scenario.Target
	tls    *tls.Config
	nd     net.Dialer
}

func newDialer(t scenario.Target, cfg Config) *dialer {
	d := &dialer{target: t}
	d.nd.Timeout = cfg.Timeout.Duration()
	if t.Scheme == "https" {
		d.tls = &tls.Config{
			ServerName:         t.Host,
			InsecureSkipVerify: cfg.Insecure, // only when the user asked with -k
			NextProtos:         []string{"http/1.1"},
			ClientSessionCache: tls.NewLRUClientSessionCache(64),
		}
	}
	return d
}

// dial connects; for TLS it also completes the handshake.
func (d *dialer) dial(ctx context.Context) (net.Conn, syscall.RawConn, error) {
	nc, err := d.nd.DialContext(ctx, "tcp", d.target.Address)
	if err != nil {
		return nil, nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if d.tls == nil {
		rc, err := nc.(syscall.Conn).SyscallConn()
		if err != nil {
			nc.Close()
			return nil, nil, fmt.Errorf("raw connection: %w", err)
		}
		return nc, rc, nil
	}
	tc := tls.Client(nc, d.tls)
	hctx, cancel := context.WithTimeout(ctx, d.nd.Timeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("TLS handshake: %w", err)
	}
	return tc, nil, nil
}
