package verdict

import "fmt"

// GeneratorLimited: apiperf's own machine ran out of local ports or file descriptors at a
// level, so that level's numbers are the generator's ceiling, never the target's failure.
const GeneratorLimited Kind = "generator-limited"

// genLimitClaim names the levels that hit a limit of the generator's machine, with the limit
// and its fix. Those levels are left out of every claim about the target (targetLevels).
func genLimitClaim(in Input) *Claim {
	var ev, who []string
	at, fix, of := "", "", 0
	for _, l := range in.Levels {
		if l.GeneratorLimit == "" {
			continue
		}
		wev, names := workersLimited(l)
		if len(wev) > 0 { // scaled out: which workers hit it
			ev = append(ev, wev...)
		} else {
			ev = append(ev, fmt.Sprintf("at %s: %s", l.Label, l.GeneratorLimit))
		}
		if at == "" {
			at, fix, who, of = l.Label, l.GeneratorFix, names, len(l.Workers)
		}
	}
	if len(ev) == 0 {
		return nil
	}
	where := at
	if len(who) > 0 {
		where += " on " + ofWorkers(who, of)
	}
	return &Claim{
		Kind: GeneratorLimited, Confidence: High, Level: at,
		Summary:  "apiperf could not open the connections asked for at " + where + ": its own machine's limit, not the target's; those levels are left out of the other claims",
		Evidence: ev,
		Fix:      fix,
	}
}

// targetLevels is in without its generator-limited levels (the peak re-indexed): what the
// claims about the target read.
func targetLevels(in Input) Input {
	out := in
	out.Levels, out.Peak = nil, -1
	for i, l := range in.Levels {
		if l.GeneratorLimit != "" {
			continue
		}
		if i == in.Peak {
			out.Peak = len(out.Levels)
		}
		out.Levels = append(out.Levels, l)
	}
	return out
}
