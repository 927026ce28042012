package verdict

import "reflect"

// Thresholds are the numbers the claims compare measurements with. Its zero value is the
// defaults: a field left 0 takes DefaultThresholds' value, so a verdict can be recomputed
// with one threshold changed (Thresholds{CPUSaturated: 0.9}.Judge(in)). A verdict keeps
// the thresholds it used, all filled in, in run.json.
type Thresholds struct {
	// CPUSaturated is the share of the cores a process may use at which it is at its cores.
	CPUSaturated float64 `json:"cpu_saturated,omitempty"`
	// CPUIdle is the share of its cores below which a target is not CPU-bound.
	CPUIdle float64 `json:"cpu_idle,omitempty"`
	// StarvedShare: a process (the target or apiperf) that used at least this share of its
	// cores, and used and waited for a CPU CPUSaturated of them together, wanted its cores
	// and was kept off them by other work. Below it, the wait is the short wake-ups of a
	// mostly idle process, which also queue on a busy machine.
	StarvedShare float64 `json:"starved_share,omitempty"`
	// BusyShare: a generator using this share of its cores is busy itself, so its late
	// wake-ups and sends are its own doing, not only other work's.
	BusyShare float64 `json:"busy_share,omitempty"`
	// MachineSaturated is the share of the machine's CPUs busy (everyone's, or the
	// generator's and the target's together) at which the machine is full.
	MachineSaturated float64 `json:"machine_saturated,omitempty"`
	// OthersCores is how many cores other processes (neither apiperf nor the target) or a
	// hypervisor (steal) must take during a level for the verdict to say the machine was
	// shared and to hold back high confidence in target-waiting and generator-bound.
	OthersCores float64 `json:"others_cores,omitempty"`
	// SchedSlowPct is the share of goroutine wake-ups waiting over 1 ms above which the
	// generator is starved (high, because a busy shared machine delays some wake-ups anyway).
	SchedSlowPct float64 `json:"sched_slow_pct,omitempty"`
	// LateSharePct: an open loop with more than this share of its sends late is behind.
	LateSharePct float64 `json:"late_share_pct,omitempty"`
	// PlateauQPS: an open-loop level completing less than this share of its rate is saturated.
	PlateauQPS float64 `json:"plateau_qps,omitempty"`
	// PlateauNear and PlateauGain: a closed-loop plateau starts at a level within
	// PlateauNear of the peak QPS after which QPS never grew past PlateauGain times its own.
	PlateauNear float64 `json:"plateau_near,omitempty"`
	PlateauGain float64 `json:"plateau_gain,omitempty"`
	// PlateauLoad is how much more load the plateau must span to count as flat throughput.
	PlateauLoad float64 `json:"plateau_load,omitempty"`
	// LatencyGrowth is how much mean latency must grow across the plateau for "waiting".
	LatencyGrowth float64 `json:"latency_growth,omitempty"`
	// ErrorStartPct is the share of failed attempts at which a level is where errors start.
	ErrorStartPct float64 `json:"error_start_pct,omitempty"`
	// LittleLow and LittleHigh bound a consistent closed-loop Little's law ratio.
	LittleLow  float64 `json:"little_low,omitempty"`
	LittleHigh float64 `json:"little_high,omitempty"`
	// Contended: a block or mutex site is evidence when at least this many goroutines
	// waited there on average (below it, the server's own short waits).
	Contended float64 `json:"contended,omitempty"`
	// WaitShare is the share of the request goroutines parked at one place for it to be
	// named as what the target waits on.
	WaitShare float64 `json:"wait_share,omitempty"`
	// GCHeavyPct: GC and allocation taking this share of the target's CPU make the
	// allocation site part of the CPU claim's place.
	GCHeavyPct float64 `json:"gc_heavy_pct,omitempty"`
	// PlaceSharePct: an application frame holding less of the CPU than this is not where
	// it goes (a library's own goroutines do the work): the CPU claim names the library.
	PlaceSharePct float64 `json:"place_share_pct,omitempty"`
}

// DefaultThresholds are the thresholds of a zero Thresholds.
var DefaultThresholds = Thresholds{
	CPUSaturated:     0.85,
	CPUIdle:          0.6,
	StarvedShare:     0.25,
	BusyShare:        0.5,
	MachineSaturated: 0.9,
	OthersCores:      0.25,
	SchedSlowPct:     25,
	LateSharePct:     1,
	PlateauQPS:       0.9,
	PlateauNear:      0.75,
	PlateauGain:      1.2,
	PlateauLoad:      1.5,
	LatencyGrowth:    1.5,
	ErrorStartPct:    1,
	LittleLow:        0.8,
	LittleHigh:       1.2,
	Contended:        0.5,
	WaitShare:        0.3,
	GCHeavyPct:       25,
	PlaceSharePct:    25,
}

// Filled is t with every zero field set to its default.
func (t Thresholds) Filled() Thresholds {
	v, d := reflect.ValueOf(&t).Elem(), reflect.ValueOf(DefaultThresholds)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			v.Field(i).Set(d.Field(i))
		}
	}
	return t
}
