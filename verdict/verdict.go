package verdict

import (
	"fmt"
	"strings"
)

// Kind names what a claim says limited the run.
type Kind string

// The kinds of claim, in the order a verdict lists them.
const (
	GeneratorBound Kind = "generator-bound"  // apiperf itself was short of CPU: the numbers understate the target
	TargetCPU      Kind = "target-cpu-bound" // the target's CPU was at its cores at the peak
	TargetWaiting  Kind = "target-waiting"   // throughput flat, latency growing, CPU idle: something off-CPU
	Growth         Kind = "growth"           // heap or goroutines grew level after level: a leak
	ErrorsStart    Kind = "errors"           // where errors start and of which class
)

// Confidence says how strongly the evidence supports a claim.
type Confidence string

// Confidences, strongest first.
const (
	High   Confidence = "high"
	Medium Confidence = "medium"
	Low    Confidence = "low"
)

// Claim is one thing the verdict says, with what it rests on.
type Claim struct {
	Kind       Kind       `json:"kind"`
	Confidence Confidence `json:"confidence"`
	// Level is where the claim shows first (a level's label), "" for the run as a whole.
	Level string `json:"level,omitempty"`
	// Summary is the claim in one sentence.
	Summary string `json:"summary"`
	// Evidence lists the measurements it rests on, one per line.
	Evidence []string `json:"evidence"`
	// Fix says what to try next.
	Fix string `json:"fix,omitempty"`
}

// String is the claim's headline, e.g. "target-cpu-bound (high): the target's CPU ...".
func (c Claim) String() string { return fmt.Sprintf("%s (%s): %s", c.Kind, c.Confidence, c.Summary) }

// LittleCheck is Little's law on one level: in flight = throughput x mean latency.
// Closed loop: in flight should be the concurrency; a lower figure means connections sat
// idle between requests (the generator was slow to send, or connections were being opened).
// Open loop: the figure is how many requests were in flight on average.
type LittleCheck struct {
	Label    string  `json:"label"`
	Load     float64 `json:"load"`
	InFlight float64 `json:"in_flight"` // QPS x mean latency
	// Ratio is InFlight / Load for a closed loop (1 is consistent), 0 for an open loop.
	Ratio float64 `json:"ratio,omitempty"`
	OK    bool    `json:"ok"`
	Note  string  `json:"note,omitempty"`
}

// Verdict is what limited a run: its claims, the Little's law check of every level, and
// what could not be judged for lack of evidence.
type Verdict struct {
	Claims []Claim       `json:"claims"`
	Little []LittleCheck `json:"little"`
	// Silent lists what the verdict could not judge and what it would need, e.g.
	// "target CPU: not measured (give --target-pid or --metrics)".
	Silent []string `json:"silent,omitempty"`
}

// Has reports whether the verdict makes a claim of kind k.
func (v *Verdict) Has(k Kind) bool { return v.Claim(k) != nil }

// Claim returns the claim of kind k, or nil.
func (v *Verdict) Claim(k Kind) *Claim {
	if v == nil {
		return nil
	}
	for i := range v.Claims {
		if v.Claims[i].Kind == k {
			return &v.Claims[i]
		}
	}
	return nil
}

// Kinds lists the kinds claimed, in order.
func (v *Verdict) Kinds() []Kind {
	if v == nil {
		return nil
	}
	var out []Kind
	for _, c := range v.Claims {
		out = append(out, c.Kind)
	}
	return out
}

// Headline is the verdict in one line: the claims' kinds, or that nothing limited the run.
func (v *Verdict) Headline() string {
	if v == nil {
		return "verdict: not judged"
	}
	if len(v.Claims) == 0 {
		return "verdict: no bottleneck found at the loads measured"
	}
	var parts []string
	for _, c := range v.Claims {
		parts = append(parts, fmt.Sprintf("%s (%s)", c.Kind, c.Confidence))
	}
	return "verdict: " + strings.Join(parts, ", ")
}

// Judge applies every rule to in and returns the verdict.
func Judge(in Input) Verdict {
	v := Verdict{Little: little(in)}
	lim, in := genLimitClaim(in), targetLevels(in)
	sat := saturation(in)
	gen := generatorClaim(in, sat, &v)
	for _, c := range []*Claim{lim, gen, cpuClaim(in, sat, &v), waitingClaim(in, sat, gen != nil, &v), growthClaim(in, &v), errorsClaim(in), serverTimingClaim(in)} {
		if c != nil {
			v.Claims = append(v.Claims, *c)
		}
	}
	v.Claims = append(v.Claims, traceClaims(in, &v)...) // trace.go
	return v
}
