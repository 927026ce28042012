package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Machine is one reading of the whole machine's CPU from /proc/stat: time summed over all
// its CPUs since boot, by what the CPUs did. Two readings give the machine's use between
// them (Since), which, less the CPU of the processes one knows, is what the others took.
type Machine struct {
	// Busy is the time the CPUs ran anything: user, nice, system, irq and softirq. A
	// virtual machine's guests are already in user and nice, so they are not added again.
	Busy time.Duration
	// Idle is the time the CPUs had nothing to run, waiting for I/O included.
	Idle time.Duration
	// Steal is the time a hypervisor ran other machines while this one had work.
	Steal time.Duration
	// CPUs is the number of logical CPUs online (the cpuN lines).
	CPUs int
}

// MachineUse is the machine's CPU use between two readings, in cores.
type MachineUse struct {
	// Busy is how many cores were busy on average, for every process and the kernel.
	Busy float64 `json:"busy_cores"`
	// Steal is how many cores a hypervisor took for other machines.
	Steal float64 `json:"steal_cores,omitempty"`
	// CPUs is the number of logical CPUs.
	CPUs int `json:"cpus"`
}

// StealShare is the share (0-1) of the machine's CPU time a hypervisor took.
func (u MachineUse) StealShare() float64 {
	if u.CPUs <= 0 {
		return 0
	}
	return u.Steal / float64(u.CPUs)
}

// Others is the CPU in cores used by everything but the given processes' CPU in cores
// (the target's and apiperf's, say), never below 0.
func (u MachineUse) Others(known ...float64) float64 {
	o := u.Busy
	for _, k := range known {
		o -= k
	}
	return max(o, 0)
}

// String prints the use, e.g. "1.4 of 2 cores busy, 0.0 stolen".
func (u MachineUse) String() string {
	return fmt.Sprintf("%.1f of %d cores busy, %.1f stolen", u.Busy, u.CPUs, u.Steal)
}

// ReadMachine reads the machine's CPU times from /proc/stat.
func ReadMachine() (Machine, error) {
	sc := getScratch()
	defer putScratch(sc)
	b, err := readSmall("/proc/stat", sc.data[:])
	if errors.Is(err, io.ErrShortBuffer) {
		b, err = os.ReadFile("/proc/stat") // a machine of many CPUs
	}
	if err != nil {
		return Machine{}, fmt.Errorf("reading the machine's CPU: %w", err)
	}
	return parseMachine(b)
}

// parseMachine reads the aggregate "cpu" line of /proc/stat's text and counts its cpuN lines.
func parseMachine(b []byte) (Machine, error) {
	var m Machine
	found := false
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		name, rest, _ := bytes.Cut(line, []byte(" "))
		switch {
		case string(name) == "cpu":
			// user nice system idle iowait irq softirq steal guest guest_nice; kernels
			// before 2.6.11 lack steal and later fields.
			if n := countFields(rest); n < 7 {
				return Machine{}, fmt.Errorf("reading the machine's CPU: /proc/stat cpu line has %d fields: %q", n, snippet(line))
			}
			var v [8]int64
			for i := range v {
				f := field(rest, i)
				if f == nil {
					break
				}
				n, err := decInt(f)
				if err != nil {
					return Machine{}, fmt.Errorf("reading the machine's CPU: bad /proc/stat cpu field %q", f)
				}
				v[i] = n
			}
			tick := time.Second / clockTicks
			m.Busy = time.Duration(v[0]+v[1]+v[2]+v[5]+v[6]) * tick
			m.Idle = time.Duration(v[3]+v[4]) * tick
			m.Steal = time.Duration(v[7]) * tick
			found = true
		case bytes.HasPrefix(name, []byte("cpu")):
			if _, err := decInt(name[3:]); err == nil {
				m.CPUs++
			}
		}
	}
	if !found {
		return Machine{}, fmt.Errorf("reading the machine's CPU: /proc/stat has no cpu line")
	}
	return m, nil
}

// Since is the machine's use between prev and m, in cores. It needs no clock: the CPUs'
// times together advance by the wall time once per CPU. Zero when nothing advanced.
func (m Machine) Since(prev Machine) MachineUse {
	busy, idle, steal := m.Busy-prev.Busy, m.Idle-prev.Idle, m.Steal-prev.Steal
	total := busy + idle + steal
	cpus := m.CPUs
	if total <= 0 || cpus <= 0 {
		return MachineUse{CPUs: cpus}
	}
	// The CPUs' time is wall time × CPUs, so a share of it times CPUs is cores. Counters
	// going backwards (a CPU taken offline) make a share below 0: clamp.
	share := func(d time.Duration) float64 { return max(float64(d)/float64(total), 0) }
	return MachineUse{Busy: share(busy) * float64(cpus), Steal: share(steal) * float64(cpus), CPUs: cpus}
}
