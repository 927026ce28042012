package profcap

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// DefaultTopN is how many functions a top table lists by default.
const DefaultTopN = 30

// TopEntry is one function's row of a `top` table. Values are in the
// table's Unit; percentages are of the table's Total.
type TopEntry struct {
	Function string  `json:"function"`
	Flat     int64   `json:"flat"`
	FlatPct  float64 `json:"flat_pct"`
	Cum      int64   `json:"cum"`
	CumPct   float64 `json:"cum_pct"`
}

// TopTable is what `go tool pprof` shows for `top N` (ByFlat) and
// `top N -cum` (ByCum) over one sample type of a profile.
type TopTable struct {
	SampleType string     `json:"sample_type"`
	Unit       string     `json:"unit"`
	Total      int64      `json:"total"`
	ByFlat     []TopEntry `json:"by_flat"`
	ByCum      []TopEntry `json:"by_cum"`
}

// String renders ByCum like `top -cum` does, one row per line.
func (t TopTable) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s), total %s\n", t.SampleType, t.Unit, formatValue(t.Total, t.Unit))
	fmt.Fprintf(&b, "%10s %6s %10s %6s  %s\n", "flat", "flat%", "cum", "cum%", "function")
	for _, e := range t.ByCum {
		fmt.Fprintf(&b, "%10s %5.2f%% %10s %5.2f%%  %s\n",
			formatValue(e.Flat, t.Unit), e.FlatPct, formatValue(e.Cum, t.Unit), e.CumPct, e.Function)
	}
	return b.String()
}

// sampleIndex finds the sample type named typ; "" means the profile's
// default sample type, or its last one.
func sampleIndex(p *profile.Profile, typ string) (int, error) {
	if len(p.SampleType) == 0 {
		return 0, fmt.Errorf("profile has no sample types")
	}
	if typ == "" {
		typ = p.DefaultSampleType
	}
	if typ == "" {
		return len(p.SampleType) - 1, nil
	}
	var names []string
	for i, st := range p.SampleType {
		if st.Type == typ {
			return i, nil
		}
		names = append(names, st.Type)
	}
	return 0, fmt.Errorf("profile has no sample type %q (has %s)", typ, strings.Join(names, ", "))
}

// stack returns a sample's function names, leaf first, inlined frames
// expanded (innermost first) as pprof does. Unsymbolized frames are named
// by address.
func stack(s *profile.Sample, buf []string) []string {
	buf = buf[:0]
	for _, loc := range s.Location {
		if len(loc.Line) == 0 {
			buf = append(buf, fmt.Sprintf("0x%x", loc.Address))
			continue
		}
		for _, ln := range loc.Line {
			name := "?"
			if ln.Function != nil && ln.Function.Name != "" {
				name = ln.Function.Name
			}
			buf = append(buf, name)
		}
	}
	return buf
}

// TopFunctions builds the top table of sample type typ ("" for the default,
// e.g. "cpu" or "alloc_space"), keeping n rows per ordering (n <= 0 means
// DefaultTopN). Flat goes to the leaf function; cum counts a function once
// per sample however often it recurs in that stack.
func TopFunctions(p *profile.Profile, typ string, n int) (TopTable, error) {
	if n <= 0 {
		n = DefaultTopN
	}
	idx, err := sampleIndex(p, typ)
	if err != nil {
		return TopTable{}, err
	}
	t := TopTable{SampleType: p.SampleType[idx].Type, Unit: p.SampleType[idx].Unit}
	flat := map[string]int64{}
	cum := map[string]int64{}
	seen := map[string]bool{}
	var buf []string
	for _, s := range p.Sample {
		if idx >= len(s.Value) {
			continue
		}
		v := s.Value[idx]
		t.Total += v
		buf = stack(s, buf)
		if len(buf) == 0 {
			continue
		}
		flat[buf[0]] += v
		clear(seen)
		for _, name := range buf {
			if !seen[name] {
				seen[name] = true
				cum[name] += v
			}
		}
	}
	entries := make([]TopEntry, 0, len(cum))
	for name, c := range cum {
		entries = append(entries, TopEntry{
			Function: name,
			Flat:     flat[name], FlatPct: pct(flat[name], t.Total),
			Cum: c, CumPct: pct(c, t.Total),
		})
	}
	t.ByFlat = topBy(entries, n, func(e TopEntry) int64 { return e.Flat })
	t.ByCum = topBy(entries, n, func(e TopEntry) int64 { return e.Cum })
	return t, nil
}

// topBy sorts a copy of entries by key descending (ties by name) and keeps n.
func topBy(entries []TopEntry, n int, key func(TopEntry) int64) []TopEntry {
	s := slices.Clone(entries)
	slices.SortFunc(s, func(a, b TopEntry) int {
		if c := cmp.Compare(key(b), key(a)); c != 0 {
			return c
		}
		return strings.Compare(a.Function, b.Function)
	})
	return s[:min(n, len(s))]
}

func pct(v, total int64) float64 {
	if total == 0 {
		return 0
	}
	return 100 * float64(v) / float64(total)
}

// Shares are percentages of a CPU profile's total spent in GC and in allocation: samples
// with a frame of the collector's work or of heap allocation (frames.go; they may overlap).
type Shares struct {
	GCPct    float64 `json:"gc_pct"`
	AllocPct float64 `json:"alloc_pct"`
}

// CPUShares computes Shares over sample type typ ("" for the default).
func CPUShares(p *profile.Profile, typ string) (Shares, error) {
	idx, err := sampleIndex(p, typ)
	if err != nil {
		return Shares{}, err
	}
	var total, gc, alloc int64
	var buf []string
	for _, s := range p.Sample {
		if idx >= len(s.Value) {
			continue
		}
		v := s.Value[idx]
		total += v
		buf = stack(s, buf)
		if slices.ContainsFunc(buf, isGC) {
			gc += v
		}
		if slices.ContainsFunc(buf, isAlloc) {
			alloc += v
		}
	}
	return Shares{GCPct: pct(gc, total), AllocPct: pct(alloc, total)}, nil
}

func isGC(name string) bool { return frameIs(name, frameGC) }

func isAlloc(name string) bool { return frameIs(name, frameAlloc) }
