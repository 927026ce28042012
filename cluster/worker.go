package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"time"

	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/measure"
)

// RunFunc runs one worker's share of a step with the engine, calling interval with each
// interval of the live stream. The CLI passes Engine; tests may pass a fake.
type RunFunc func(ctx context.Context, p *Plan, interval func(*measure.Interval)) (*measure.Step, error)

// ErrRefused is returned by Work when the coordinator refused the worker (wrong token,
// version mismatch, run full); nothing was run.
var ErrRefused = errors.New("refused by the coordinator")

// ErrCoordinatorLost is returned by Work when the coordinator went away; the worker
// stopped its load.
var ErrCoordinatorLost = errors.New("coordinator lost")

// WorkerOptions are the worker's in-process knobs.
type WorkerOptions struct {
	Log  io.Writer     // progress lines (default: discarded); the token is never written
	Dial time.Duration // how long to keep trying to reach the coordinator (default 30s)
	// TLS, when set, joins over TLS with this client configuration (the coordinator's
	// certificate is verified against it).
	TLS *tls.Config
	// Apiperf is apiperf's version, recorded in the conditions sent with every step.
	Apiperf string
	version int    // tests: speak another version
	host    string // tests: the host name to give (default: os.Hostname)
}

// Work joins the coordinator at addr with token, runs every plan it is given with run, and
// returns nil when the coordinator says it is done. A worker never loads on its own: when
// the coordinator is silent for deadAfter or its connection drops, the step's context is
// cancelled and Work returns ErrCoordinatorLost.
func Work(ctx context.Context, addr, token string, run RunFunc, o WorkerOptions) error {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Dial <= 0 {
		o.Dial = 30 * time.Second
	}
	if o.version == 0 {
		o.version = Version
	}
	nc, err := dialRetry(ctx, addr, o.Dial)
	if err != nil {
		return err
	}
	if o.TLS != nil {
		cfg := o.TLS
		if cfg.ServerName == "" { // verify the name dialed
			cfg = cfg.Clone()
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(nc, cfg)
		hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			nc.Close()
			return fmt.Errorf("joining %s: TLS: %w", addr, err)
		}
		nc = tc
	}
	c := newConn(nc)
	defer nc.Close()
	stopClose := context.AfterFunc(ctx, func() { nc.Close() })
	defer stopClose()
	if err := handshake(c, addr, token, o); err != nil {
		return err
	}
	done := make(chan struct{})
	defer close(done)
	go c.beat(done)
	msgs := c.readLoop()
	for {
		m, ok := <-msgs
		if !ok {
			return lost(ctx, c.err)
		}
		switch m.Type {
		case msgPing:
			if err := c.send(&message{Type: msgPong, T0: m.T0, T1: time.Now().UnixNano()}, 5*time.Second); err != nil {
				return lost(ctx, err)
			}
		case msgStop:
		case msgDone:
			fmt.Fprintf(o.Log, "apiperf: coordinator done\n")
			return nil
		case msgPlan:
			if m.Plan == nil {
				return errors.New("protocol: plan message without a plan")
			}
			if err := runPlan(ctx, c, msgs, m.Plan, run, o); err != nil {
				return err
			}
		default:
			return fmt.Errorf("protocol: unexpected %q", m.Type)
		}
	}
}

// handshake answers the coordinator's challenge and waits to be welcomed.
func handshake(c *conn, addr, token string, o WorkerOptions) error {
	m, err := c.recv(10 * time.Second)
	if err != nil {
		return fmt.Errorf("joining %s: %w", addr, err)
	}
	if m.Type != msgChallenge {
		return fmt.Errorf("joining %s: want a challenge, got %q", addr, m.Type)
	}
	if m.Version != o.version {
		return fmt.Errorf("joining %s: %w: the coordinator speaks protocol version %d, this worker %d (use the same apiperf release)", addr, ErrRefused, m.Version, o.version)
	}
	host := o.host
	if host == "" {
		host, _ = os.Hostname()
	}
	if err := c.send(&message{Type: msgHello, Version: o.version, MAC: proof(token, m.Nonce), Host: host, Cores: runtime.NumCPU()}, 10*time.Second); err != nil {
		return fmt.Errorf("joining %s: %w", addr, err)
	}
	if m, err = c.recv(10 * time.Second); err != nil {
		return fmt.Errorf("joining %s: %w", addr, err)
	}
	switch m.Type {
	case msgRefused:
		return fmt.Errorf("joining %s: %w: %s", addr, ErrRefused, Printable(m.Reason, maxWarning))
	case msgWelcome:
	default:
		return fmt.Errorf("joining %s: want welcome, got %q", addr, m.Type)
	}
	fmt.Fprintf(o.Log, "apiperf: joined %s as worker %d of %d\n", addr, m.Worker+1, m.Workers)
	return nil
}

// lost is the error for a connection that failed: the caller's cancellation, or the
// coordinator gone.
func lost(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("%w: %v", ErrCoordinatorLost, err)
}

var errStopped = errors.New("stopped by the coordinator")

// runPlan waits for the start time and runs the plan, streaming intervals and then the
// final step, while it watches the coordinator: a stop ends the step early (its data is
// still sent), a drop or silence cancels it and Work returns ErrCoordinatorLost.
func runPlan(ctx context.Context, c *conn, msgs <-chan *message, p *Plan, run RunFunc, o WorkerOptions) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	over := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-over:
				return
			case m, ok := <-msgs:
				if !ok {
					cancel(fmt.Errorf("%w: %v", ErrCoordinatorLost, c.err))
					return
				}
				switch m.Type {
				case msgStop:
					cancel(errStopped)
				case msgPing:
					c.send(&message{Type: msgPong, T0: m.T0, T1: time.Now().UnixNano()}, 5*time.Second)
				default:
					cancel(fmt.Errorf("protocol: unexpected %q during a step", m.Type))
					return
				}
			}
		}
	}()
	fmt.Fprintf(o.Log, "apiperf: worker %d: %s, starting at %s\n", p.Worker+1, p.Load, p.StartAt.Format("15:04:05.000"))
	var err error
	var step *measure.Step
	var cond *conditions.Record
	t := time.NewTimer(time.Until(p.StartAt))
	select {
	case <-t.C:
		end := newWorkerConditions(p, o.Apiperf) // this machine during the step, as a local run records it
		step, err = run(ctx, p, func(iv *measure.Interval) {
			c.send(&message{Type: msgInterval, Interval: iv}, 5*time.Second) // a failed send shows as a drop to the reader
		})
		if err != nil {
			step = nil
		}
		cond = end(step)
	case <-ctx.Done():
		t.Stop()
	}
	close(over)
	<-watched
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, errStopped) {
		if errors.Is(cause, ErrCoordinatorLost) {
			return cause
		}
		return lost(ctx, cause)
	}
	reply := &message{Type: msgStep, Step: step, Conditions: cond}
	if err != nil || step == nil {
		reply = &message{Type: msgFailed, Error: fmt.Sprint(err)}
	}
	if e := c.send(reply, 10*time.Second); e != nil {
		return lost(ctx, e)
	}
	return nil
}

// dialRetry dials addr until it answers or patience runs out (workers may start first).
func dialRetry(ctx context.Context, addr string, patience time.Duration) (net.Conn, error) {
	deadline := time.Now().Add(patience)
	var d net.Dialer
	for {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		nc, err := d.DialContext(dctx, "tcp", addr)
		cancel()
		if err == nil {
			return nc, nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return nil, fmt.Errorf("joining %s: %w", addr, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
