package target

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"
)

// SpawnTimeout bounds how long Spawn waits for the child's "listening on" line.
const SpawnTimeout = 15 * time.Second

// StopTimeout is how long Stop waits after an interrupt before it kills the child.
const StopTimeout = ShutdownGrace + 2*time.Second

// maxStderr caps how much of the child's stderr a Process keeps.
const maxStderr = 64 << 10

// Process is a target running as a child process (see Spawn).
type Process struct {
	cmd    *exec.Cmd
	url    string
	stderr *tailBuffer
	exited chan struct{} // closed when the child has exited
	err    error         // cmd.Wait's result, set before exited is closed

	stopOnce sync.Once
	stopErr  error
}

// Spawn starts `exe serve --addr 127.0.0.1:0 args...` as a child process, waits for
// its "listening on" line and returns it running. The child is killed if ctx ends.
func Spawn(ctx context.Context, exe string, args ...string) (*Process, error) {
	argv := append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)
	cmd := exec.CommandContext(ctx, exe, argv...)
	lines := &lineWatcher{found: make(chan string, 1)}
	p := &Process{cmd: cmd, stderr: &tailBuffer{}, exited: make(chan struct{})}
	cmd.Stdout = lines
	cmd.Stderr = p.stderr
	cmd.Cancel = func() error { return interrupt(cmd.Process) }
	cmd.WaitDelay = StopTimeout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting target %s: %w", exe, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	timer := time.NewTimer(SpawnTimeout)
	defer timer.Stop()
	var fail error
	select {
	case u := <-lines.found:
		p.url = u
		return p, nil
	case <-p.exited:
		fail = fmt.Errorf("target exited before listening: %v", p.err)
	case <-timer.C:
		fail = fmt.Errorf("target printed no %q line within %v", strings.TrimSpace(ListeningPrefix), SpawnTimeout)
	case <-ctx.Done():
		fail = fmt.Errorf("waiting for target: %w", ctx.Err())
	}
	p.Stop()
	if msg := strings.TrimSpace(p.Stderr()); msg != "" {
		fail = fmt.Errorf("%w: stderr: %s", fail, msg)
	}
	return nil, fmt.Errorf("spawning %s serve: %w", exe, fail)
}

// URL returns the child's base URL, e.g. http://127.0.0.1:41234.
func (p *Process) URL() string { return p.url }

// Pid returns the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stderr returns what the child wrote to stderr so far (its last 64 KiB).
func (p *Process) Stderr() string { return p.stderr.String() }

// Stop interrupts the child so it shuts down gracefully, kills it after StopTimeout,
// and returns an error if it did not exit cleanly. It is idempotent.
func (p *Process) Stop() error {
	p.stopOnce.Do(func() {
		select {
		case <-p.exited:
		default:
			interrupt(p.cmd.Process)
		}
		timer := time.NewTimer(StopTimeout)
		defer timer.Stop()
		select {
		case <-p.exited:
		case <-timer.C:
			p.cmd.Process.Kill()
			<-p.exited
			p.stopErr = fmt.Errorf("target pid %d did not stop within %v; killed", p.Pid(), StopTimeout)
			return
		}
		var exit *exec.ExitError
		clean := p.err == nil || errors.Is(p.err, context.Canceled) || errors.Is(p.err, context.DeadlineExceeded) ||
			(errors.As(p.err, &exit) && exit.ExitCode() == 130)
		if !clean {
			p.stopErr = fmt.Errorf("target pid %d: %w", p.Pid(), p.err)
		}
	})
	return p.stopErr
}

// interrupt asks the process to stop gracefully (kills it where signals are not supported).
func interrupt(proc *os.Process) error {
	if runtime.GOOS == "windows" {
		return proc.Kill()
	}
	return proc.Signal(os.Interrupt)
}

// lineWatcher receives the child's stdout and reports the URL from the first
// "listening on" line; everything else is dropped.
type lineWatcher struct {
	mu    sync.Mutex
	buf   []byte
	done  bool
	found chan string
}

func (l *lineWatcher) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return len(p), nil
	}
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
		if u, ok := strings.CutPrefix(line, ListeningPrefix); ok {
			l.done = true
			l.buf = nil
			l.found <- u
			break
		}
	}
	if len(l.buf) > maxStderr {
		l.buf = l.buf[len(l.buf)-maxStderr:]
	}
	return len(p), nil
}

// tailBuffer keeps the last maxStderr bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > maxStderr {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-maxStderr:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
