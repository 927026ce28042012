package verdict

import "fmt"

// GeneratorLimited: apiperf's own machine ran out of local ports or file descriptors at a
// level, so that level's numbers are the generator's ceiling, never the target's failure.
const GeneratorLimited Kind = "generator-limited"

// genLimitClaim names the levels that hit a limit of the generator's machine, with the limit
// and its fix. Those levels are left out of every claim about the target (targetLevels).
func genLimitClaim(in Input) *Claim {
	var ev []string
	at, fix := "", ""
	for _, l := range in.Levels {
		if l.GeneratorLimit == "" {
			continue
		}
		ev = append(ev, fmt.Sprintf("at %s: %s", l.Label, l.GeneratorLimit))
		if at == "" {
			at, fix = l.Label, l.GeneratorFix
		}
	}
	if len(ev) == 0 {
		return nil
	}
	return &Claim{
		Kind: GeneratorLimited, Confidence: High, Level: at,
		Summary:  "apiperf could not open the connections asked for at " + at + ": its own machine's limit, not the target's; those levels are left out of the other claims",
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
