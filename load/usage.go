package load

import (
	"os"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/procfs"
)

// usage is a reading of the generator's own resource use: CPU time of the process, how
// long its threads waited for a CPU, and the Go scheduler's latency histogram, so a step can
// say whether apiperf itself was short of CPU.
type usage struct {
	at      time.Time
	cpu     time.Duration
	runWait time.Duration // 0: unknown (no /proc)
	counts  []uint64
	bounds  []float64
}

func readUsage() usage {
	u := usage{at: time.Now()}
	u.cpu, _ = procfs.SelfCPU()
	if sc, err := procfs.ReadSched(os.Getpid()); err == nil {
		u.runWait = sc.Wait
	}
	s := []metrics.Sample{{Name: schedMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindFloat64Histogram {
		h := s[0].Value.Float64Histogram()
		u.counts = append([]uint64(nil), h.Counts...)
		u.bounds = h.Buckets
	}
	return u
}

// cpuLimit is apiperf's cgroup CPU limit in cores (0: none), read once.
var cpuLimit = sync.OnceValue(func() float64 { return procfs.CPULimit(os.Getpid()) })

// generator is what the process used between u0 and u1. The cores it may use are
// GOMAXPROCS (-t), no more than the CPUs of its affinity and its cgroup's CPU limit.
func generator(u0, u1 usage) *measure.Generator {
	cores := float64(min(runtime.GOMAXPROCS(0), runtime.NumCPU()))
	if l := cpuLimit(); l > 0 {
		cores = min(cores, l)
	}
	g := &measure.Generator{
		CPU:         measure.Duration(u1.cpu - u0.cpu),
		Wall:        measure.Duration(u1.at.Sub(u0.at)),
		Cores:       cores,
		MachineCPUs: runtime.NumCPU(),
	}
	if u0.runWait > 0 && u1.runWait >= u0.runWait {
		g.RunWait = measure.Duration(u1.runWait - u0.runWait)
	}
	if len(u0.counts) == len(u1.counts) && len(u1.counts) > 0 {
		var total, slow uint64
		for i := range u1.counts {
			d := u1.counts[i] - u0.counts[i]
			total += d
			if u1.bounds[i] >= starvedWait.Seconds() {
				slow += d
			}
		}
		if total > 0 {
			g.SchedSlowPct = 100 * float64(slow) / float64(total)
		}
	}
	return g
}
