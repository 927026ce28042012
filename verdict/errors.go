package verdict

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// ErrorsStart says where errors start and of which class.
const ErrorsStart Kind = "errors"

// errorClass is one class of failed attempts and what it usually means.
type errorClass struct {
	name string
	n    int64
	why  string
}

// errorsClaim: the first level (by load) where errors pass ErrorStartPct, and their class.
// A search that ran its levels in another order (capacity: Input.Ran) is read in the order
// its probes ran; errors at every level are said as such, not as a start.
func errorsClaim(j *judgement) *Claim {
	in := j.in
	first := slices.IndexFunc(in.Levels, func(l Level) bool { return l.errorPct() >= j.t.ErrorStartPct })
	if first < 0 {
		return nil
	}
	l := in.Levels[first]
	top := errorClasses(l)[0]
	all := !slices.ContainsFunc(in.Levels, func(l Level) bool { return l.errorPct() < j.t.ErrorStartPct })
	ev := []string{fmt.Sprintf("at %s %.1f%% of %s attempts failed: %s", l.Label, l.errorPct(), num(float64(l.Attempts)), l.Errors.String())}
	sum := fmt.Sprintf("errors start at %s, mostly %s: %s", l.Label, top.name, top.why)
	if all && len(in.Levels) > 1 {
		ran := in.ranOrder()
		f := in.Levels[ran[0]]
		top = errorClasses(f)[0]
		sum = fmt.Sprintf("every level failed, from the first (%s) on, mostly %s: %s", f.Label, top.name, top.why)
		var parts []string
		for _, i := range ran {
			parts = append(parts, fmt.Sprintf("%s %.1f%%", in.Levels[i].Label, in.Levels[i].errorPct()))
		}
		order := "in the order they ran"
		if in.Ran == nil {
			order = "by load"
		}
		ev = []string{fmt.Sprintf("failed attempts per level, %s: %s", order, strings.Join(parts, ", ")),
			fmt.Sprintf("at %s (the first): %s of %s attempts failed: %s", f.Label, num(float64(f.Errors.Total())), num(float64(f.Attempts)), f.Errors.String())}
		l = f
	} else {
		if first > 0 {
			p := in.Levels[first-1]
			ev = append(ev, fmt.Sprintf("at %s, the load below: %.2f%%", p.Label, p.errorPct()))
		}
		if hi := len(in.Levels) - 1; first < hi {
			ev = append(ev, fmt.Sprintf("at %s, the highest load: %.1f%%", in.Levels[hi].Label, in.Levels[hi].errorPct()))
		}
	}
	if top.name == "status" && len(l.Status) > 0 {
		ev = append(ev, statusEvidence(l.Status, in.GRPC))
	}
	conf := High
	idx := slices.IndexFunc(in.Levels, func(x Level) bool { return x.Label == l.Label })
	weaker := func(why string) {
		conf = Medium
		ev = append(ev, why)
	}
	if n := l.Errors.Total(); n < 10 {
		weaker(fmt.Sprintf("confidence medium: only %d failed attempts", n))
	}
	if m := j.machineAt(idx); m != nil && (m.Shared || m.Full && !m.TargetUnknown) && top.name != "status" && top.name != "protocol" {
		weaker(fmt.Sprintf("confidence medium: %s; a target or an apiperf kept off the CPU fails like a saturated one", sharedNote(m)))
	}
	if !all {
		for _, x := range in.Levels[idx+1:] {
			if x.Attempts > 0 && x.errorPct() < j.t.ErrorStartPct {
				weaker(fmt.Sprintf("confidence medium: at %s, a higher load, only %.2f%% failed", x.Label, x.errorPct()))
				break
			}
		}
	}
	return &Claim{
		Kind: ErrorsStart, Confidence: conf, Level: l.Label,
		Summary:  sum,
		Evidence: ev,
		Fix:      errorFix(top.name, all && l.Errors.Connect >= l.Errors.Total()*9/10),
	}
}

// ranOrder is the order the levels ran: Ran when given, else plan order.
func (in Input) ranOrder() []int {
	var out []int
	for _, i := range in.Ran {
		if i >= 0 && i < len(in.Levels) && !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	for i := range in.Levels {
		if !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	return out
}

// errorClasses are a level's failures by class, most first.
func errorClasses(l Level) []errorClass {
	e := l.Errors
	classes := []errorClass{
		{"connect", e.Connect, "connections refused or reset as they opened: a connection limit, listen backlog or file-descriptor limit on one side, or nothing listening"},
		{"read", e.Read, "connections reset or closed before the response: a connection limit, listen backlog, file-descriptor or keep-alive limit on one side"},
		{"write", e.Write, "connections reset while sending: a connection limit, listen backlog, file-descriptor or keep-alive limit on one side"},
		{"timeout", e.Timeout, "requests outlived the timeout: the target is saturated and requests queue"},
		{"status", e.Status, "the target answered with unexpected status codes"},
		{"protocol", e.Protocol, "responses that are not valid HTTP"},
	}
	slices.SortStableFunc(classes, func(a, b errorClass) int { return cmp.Compare(b.n, a.n) })
	return classes
}

func errorFix(class string, refusedEverywhere bool) string {
	switch {
	case refusedEverywhere:
		return "check that the target is up and listens on the URL's host and port; then raise its connection limits if it does"
	case class == "connect", class == "read", class == "write":
		return "raise the connection limit (the target's or its proxy's), the listen backlog (somaxconn) and the open-file limits (ulimit -n) on both sides, and reuse connections"
	case class == "timeout":
		return "the target is past its capacity here: see the other claims for what limits it, or raise --timeout if the latency is acceptable"
	case class == "status":
		return "read the target's logs for the failing responses"
	}
	return "capture a failing response (a Lua response() hook) to see what the target sent"
}
