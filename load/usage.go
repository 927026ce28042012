package load

import (
	"runtime"
	"runtime/metrics"
	"syscall"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// usage is a reading of the generator's own resource use: CPU time of the process and the
// scheduler's latency histogram, so a step can say whether apiperf itself was short of CPU.
type usage struct {
	at     time.Time
	cpu    time.Duration
	counts []uint64
	bounds []float64
}

func readUsage() usage {
	u := usage{at: time.Now()}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		u.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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

// generator is what the process used between u0 and u1.
func generator(u0, u1 usage) *measure.Generator {
	g := &measure.Generator{
		CPU:         measure.Duration(u1.cpu - u0.cpu),
		Wall:        measure.Duration(u1.at.Sub(u0.at)),
		Cores:       runtime.GOMAXPROCS(0),
		MachineCPUs: runtime.NumCPU(),
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
