package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Admission limits: before a joiner has proved it knows the token it gets preAuthDeadline
// for the whole handshake and preAuthMessage bytes for its hello (a real one is under 300),
// and at most maxJoiners handshakes run at once; more connections are closed at once.
const (
	preAuthDeadline = 3 * time.Second
	preAuthMessage  = 4 << 10
	maxJoiners      = 64
	maxHostName     = 64
)

// Join waits until every worker has joined, refusing those with a wrong token or another
// protocol version (they never see a plan). Joiners are admitted concurrently, each within
// preAuthDeadline, so silent or slow connections cannot hold real workers off; the join
// timeout bounds the whole join.
func (c *Coordinator) Join(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.o.JoinTimeout)
	defer cancel()
	noun := "workers"
	if c.o.Workers == 1 {
		noun = "worker"
	}
	fmt.Fprintf(c.o.Log, "apiperf: waiting for %d %s on %s (join timeout %v)\n", c.o.Workers, noun, c.Addr(), c.o.JoinTimeout)
	a := &admission{c: c, full: make(chan struct{}), pending: map[net.Conn]bool{}}
	stop := context.AfterFunc(ctx, a.close)
	defer stop()
	for {
		nc, err := c.ln.Accept()
		if err != nil {
			break
		}
		a.start(ctx, nc)
	}
	a.close()
	a.wg.Wait()
	c.ln.Close() // no more joins: a late worker is refused by the closed port
	if len(c.members) < c.o.Workers {
		n := len(c.members)
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return fmt.Errorf("%w: %d of %d joined within %v", ErrJoinTimeout, n, c.o.Workers, c.o.JoinTimeout)
		case ctx.Err() != nil:
			return ctx.Err()
		}
		return fmt.Errorf("accepting workers: %d of %d joined", n, c.o.Workers)
	}
	for _, m := range c.members {
		c.wait.Add(1)
		go c.forward(m)
	}
	return nil
}

// admission is the state of one Join: the handshakes under way and the members so far.
type admission struct {
	c       *Coordinator
	wg      sync.WaitGroup
	mu      sync.Mutex
	logMu   sync.Mutex
	pending map[net.Conn]bool
	done    bool
	full    chan struct{}
}

// start runs nc's handshake in its own goroutine, or closes nc when too many are under way.
func (a *admission) start(ctx context.Context, nc net.Conn) {
	a.mu.Lock()
	if a.done || len(a.pending) >= maxJoiners {
		a.mu.Unlock()
		nc.Close()
		return
	}
	a.pending[nc] = true
	a.wg.Add(1)
	a.mu.Unlock()
	go func() {
		defer a.wg.Done()
		m, err := a.c.admit(ctx, nc, a.enrol)
		a.mu.Lock()
		_, cut := a.pending[nc]
		cut = cut && a.done
		delete(a.pending, nc)
		a.mu.Unlock()
		if err != nil && cut {
			err = errors.New("the join ended before its hello")
		}
		if err != nil {
			a.logf("apiperf: refused a worker from %s: %v\n", nc.RemoteAddr(), err)
			nc.Close()
			return
		}
		a.logf("apiperf: worker %d of %d joined: %s (%s, %d cores)\n", m.index+1, a.c.o.Workers, m.host, m.addr, m.cores)
	}()
}

// logf writes one progress line; the handshakes run concurrently.
func (a *admission) logf(format string, args ...any) {
	a.logMu.Lock()
	defer a.logMu.Unlock()
	fmt.Fprintf(a.c.o.Log, format, args...)
}

// enrol makes m a member, unless the join is over or full; the last one ends the join.
func (a *admission) enrol(m *member) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.c
	if a.done || len(c.members) >= c.o.Workers {
		return false
	}
	delete(a.pending, m.c.nc) // a member: closing the join no longer cuts it off
	c.mu.Lock()
	m.index = len(c.members)
	c.members = append(c.members, m)
	c.mu.Unlock()
	if len(c.members) == c.o.Workers {
		a.stopLocked()
	}
	return true
}

// close ends the join: no more accepts, and the handshakes under way are cut off.
func (a *admission) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stopLocked()
	for nc := range a.pending {
		nc.Close()
	}
}

func (a *admission) stopLocked() {
	if !a.done {
		a.done = true
		a.c.ln.Close()
	}
}

// admit runs the handshake within preAuthDeadline: challenge, hello checked for version
// and token (at most preAuthMessage bytes), then enrol and welcome.
func (c *Coordinator) admit(ctx context.Context, nc net.Conn, enrol func(*member) bool) (*member, error) {
	cn := newConn(nc)
	deadline := time.Now().Add(preAuthDeadline)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	nc.SetDeadline(deadline)
	wait := time.Until(deadline)
	nonce := newNonce()
	if err := cn.encode(&message{Type: msgChallenge, Version: Version, Nonce: nonce}); err != nil {
		return nil, err
	}
	h, err := cn.decode(preAuthMessage)
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return nil, fmt.Errorf("no hello within %v", wait.Round(time.Millisecond))
	case err != nil:
		return nil, fmt.Errorf("no valid hello: %w", err)
	}
	refuse := func(reason string) error {
		cn.encode(&message{Type: msgRefused, Reason: reason})
		return errors.New(reason)
	}
	switch {
	case h.Type != msgHello:
		return nil, refuse(fmt.Sprintf("want hello, got %q", Printable(h.Type, 32)))
	case h.Version != Version:
		return nil, refuse(fmt.Sprintf("protocol version mismatch: coordinator %d, worker %d (use the same apiperf release)", Version, h.Version))
	case !validProof(c.o.Token, nonce, h.MAC):
		return nil, refuse("wrong token")
	}
	m := &member{host: Printable(h.Host, maxHostName), addr: nc.RemoteAddr().String(), cores: min(max(h.Cores, 1), 4096), c: cn}
	if m.host == "" {
		m.host = "?"
	}
	if !enrol(m) {
		return nil, refuse(fmt.Sprintf("the cluster already has its %d workers", c.o.Workers))
	}
	err = cn.encode(&message{Type: msgWelcome, Worker: m.index, Workers: c.o.Workers})
	nc.SetDeadline(time.Time{})
	if err != nil {
		nc.Close() // the member is named lost at its first step
	}
	return m, nil
}

// Printable returns s with control and other non-printing characters (terminal escapes
// among them) replaced by '?', cut to at most n runes: a peer's words made safe to print.
func Printable(s string, n int) string {
	var b strings.Builder
	for i, r := range []rune(s) {
		if i == n {
			b.WriteString("...")
			break
		}
		if !unicode.IsPrint(r) {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}
