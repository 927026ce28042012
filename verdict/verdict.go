package verdict

import (
	"fmt"
	"slices"
	"strings"
)

// Kind names what a claim says limited the run.
type Kind string

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
	// Machine is the machine's CPU per level, by who used it; empty when not measured.
	Machine []MachineCheck `json:"machine,omitempty"`
	// Thresholds are the ones the claims used, every field filled in.
	Thresholds *Thresholds `json:"thresholds,omitempty"`
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

// SharedMachine reports whether other processes or a hypervisor took CPU at some level.
func (v *Verdict) SharedMachine() bool {
	return v != nil && slices.ContainsFunc(v.Machine, func(m MachineCheck) bool { return m.Shared })
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

// Judge applies every claim to in with the default thresholds and returns the verdict.
func Judge(in Input) Verdict { return Thresholds{}.Judge(in) }

// Judge applies every claim to in with thresholds t (zero fields: the defaults).
func (t Thresholds) Judge(in Input) Verdict {
	t = t.Filled()
	v := Verdict{Thresholds: &t}
	j := &judgement{in: in, t: t, v: &v}
	v.Little = j.little()
	// A level the generator limited says nothing of the target: the generator-limited claim
	// reads every level, the others only the levels the generator did not limit (genlimit.go).
	if lim := genLimitClaim(in); lim != nil {
		v.Claims = append(v.Claims, *lim)
	}
	j.in = targetLevels(in)
	v.Machine = j.machine()
	j.sat = j.saturation()
	for _, claim := range claims {
		v.Claims = append(v.Claims, claim(j)...)
	}
	return v
}

// claims are the verdict's claims in the order it lists them, each a function of the
// judgement in a file of its own named for it; a claim may read the claims made before it
// (j.v.Claim). Adding a claim is adding its file, with its Kind, and one line here: one(f)
// for a function making at most one claim, or a func(*judgement) []Claim making several.
var claims = []func(*judgement) []Claim{
	one(generatorClaim), // generator.go
	one(cpuClaim),       // cpu.go
	one(waitingClaim),   // waiting.go
	one(growthClaim),    // growth.go
	one(errorsClaim),    // errors.go
	func(j *judgement) []Claim { return oneOf(serverTimingClaim(j)) }, // servertiming.go
	func(j *judgement) []Claim { return traceClaims(j.in, j.v) },      // trace.go
}

// oneOf is c as a list of claims: none when c is nil.
func oneOf(c *Claim) []Claim {
	if c == nil {
		return nil
	}
	return []Claim{*c}
}

// one adapts a function making at most one claim to the claims list.
func one(f func(*judgement) *Claim) func(*judgement) []Claim {
	return func(j *judgement) []Claim { return oneOf(f(j)) }
}

// judgement is what every claim reads: the input, the thresholds, where throughput stopped
// following load, and the verdict so far.
type judgement struct {
	in  Input
	t   Thresholds
	sat plateau
	v   *Verdict
}

// silent adds what a claim could not judge and why.
func (j *judgement) silent(s string) { j.v.Silent = append(j.v.Silent, s) }

// peak is the peak level, or nil.
func (j *judgement) peak() *Level {
	if j.in.Peak < 0 || j.in.Peak >= len(j.in.Levels) {
		return nil
	}
	return &j.in.Levels[j.in.Peak]
}
