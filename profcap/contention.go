package profcap

import (
	"cmp"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// DefaultContentionSites is how many sites Analyze keeps of a block or mutex profile.
const DefaultContentionSites = 5

// Contention is what a block or mutex profile says: where goroutines waited (block: on
// channels, selects, sync.Cond and locks; mutex: the lock holders that made others wait),
// by time spent waiting: the request goroutines' sites when the profile has any, else
// every site but the server's own plumbing. The profiles exist only
// when the target turned them on (runtime.SetBlockProfileRate, SetMutexProfileFraction).
type Contention struct {
	Kind Kind `json:"kind"`
	// Seconds is the span the profile covers (a delta profile fetched with ?seconds=N).
	Seconds float64 `json:"seconds"`
	// DelayNs is the time waited at every site but the plumbing's; Events the contentions.
	DelayNs int64         `json:"delay_ns"`
	Events  int64         `json:"events"`
	Sites   []ContendSite `json:"sites,omitempty"`
}

// ContendSite is one place goroutines waited, e.g. sync.(*Cond).Wait from main.(*pool).get.
type ContendSite struct {
	Function string `json:"function"`         // first frame outside the runtime
	Caller   string `json:"caller,omitempty"` // first frame of the application that led there, if not Function
	What     string `json:"what,omitempty"`   // the pool or primitive in words (WaitSite.What)
	Events   int64  `json:"events"`
	DelayNs  int64  `json:"delay_ns"`
}

// Site is the site in words, e.g. "sync.(*Mutex).Unlock from main.(*cache).put".
func (c ContendSite) Site() string {
	return WaitSite{Function: c.Function, Caller: c.Caller, What: c.What}.Site()
}

// Pct is the site's share of c's delay, in percent.
func (c Contention) Pct(s ContendSite) float64 {
	if c.DelayNs == 0 {
		return 0
	}
	return 100 * float64(s.DelayNs) / float64(c.DelayNs)
}

// ContentionSites groups a block or mutex profile's samples by site, most delay first,
// and keeps n (n <= 0: DefaultContentionSites). ok is false when the profile has no
// delay outside the plumbing: the target did not enable it, or nothing waited.
func ContentionSites(kind Kind, p *profile.Profile, n int) (c Contention, ok bool) {
	if n <= 0 {
		n = DefaultContentionSites
	}
	c = Contention{Kind: kind}
	if p.DurationNanos > 0 {
		c.Seconds = float64(p.DurationNanos) / 1e9
	}
	events, delay := -1, -1
	for i, st := range p.SampleType {
		switch st.Type {
		case "contentions":
			events = i
		case "delay":
			delay = i
		}
	}
	if delay < 0 {
		return c, false
	}
	// Samples of request goroutines when the profile has any (the server's and libraries'
	// background goroutines, such as database/sql's connectionOpener, block too); else
	// every sample but the plumbing's.
	type key struct{ fn, caller, what string }
	sums := [2]map[key]*ContendSite{{}, {}}
	var totals [2][2]int64 // [request?][delay, events]
	var buf []string
	for _, s := range p.Sample {
		if len(s.Value) <= delay {
			continue
		}
		buf = stack(s, buf)
		kind, _, root := requestPath(buf)
		req := 0
		switch {
		case kind == pathRequest:
			req = 1
		case kind == pathIdle, slices.ContainsFunc(buf, isPlumbing):
			continue
		default:
			root = len(buf)
		}
		var trimmed []string
		for i, f := range buf {
			if !frameIs(f, frameLock) {
				trimmed = buf[i:]
				root -= i
				break
			}
		}
		site := nameWait(trimmed, root, "blocked")
		if site.Function == "" {
			continue
		}
		k := key{site.Function, site.Caller, site.What}
		cs := sums[req][k]
		if cs == nil {
			cs = &ContendSite{Function: site.Function, Caller: site.Caller, What: site.What}
			sums[req][k] = cs
		}
		cs.DelayNs += s.Value[delay]
		totals[req][0] += s.Value[delay]
		if events >= 0 {
			cs.Events += s.Value[events]
			totals[req][1] += s.Value[events]
		}
	}
	pick := 0
	if totals[1][0] > 0 {
		pick = 1
	}
	c.DelayNs, c.Events = totals[pick][0], totals[pick][1]
	for _, cs := range sums[pick] {
		if cs.DelayNs > 0 {
			c.Sites = append(c.Sites, *cs)
		}
	}
	slices.SortFunc(c.Sites, func(a, b ContendSite) int {
		if d := cmp.Compare(b.DelayNs, a.DelayNs); d != 0 {
			return d
		}
		return strings.Compare(a.Site(), b.Site())
	})
	c.Sites = c.Sites[:min(n, len(c.Sites))]
	return c, c.DelayNs > 0
}
