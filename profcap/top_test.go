package profcap

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/apiperf/apiperf/internal/golden"
)

// stk is one sample for fakeProfile: frames leaf first; a frame "a|b" is one
// location with a inlined into b.
type stk struct {
	frames []string
	v      int64
}

// fakeProfile builds a CPU-like profile (samples/count, cpu/nanoseconds);
// the count of each sample is 1.
func fakeProfile(samples ...stk) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10_000_000,
	}
	funcs := map[string]*profile.Function{}
	fn := func(name string) *profile.Function {
		if f, ok := funcs[name]; ok {
			return f
		}
		f := &profile.Function{ID: uint64(len(funcs) + 1), Name: name, SystemName: name}
		funcs[name] = f
		p.Function = append(p.Function, f)
		return f
	}
	locs := map[string]*profile.Location{}
	for _, s := range samples {
		var ls []*profile.Location
		for _, fr := range s.frames {
			loc, ok := locs[fr]
			if !ok {
				loc = &profile.Location{ID: uint64(len(locs) + 1), Address: uint64(0x1000 + len(locs))}
				for _, name := range strings.Split(fr, "|") {
					loc.Line = append(loc.Line, profile.Line{Function: fn(name), Line: 1})
				}
				locs[fr] = loc
				p.Location = append(p.Location, loc)
			}
			ls = append(ls, loc)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: ls, Value: []int64{1, s.v}})
	}
	return p
}

func TestTopFunctions(t *testing.T) {
	tests := []struct {
		name     string
		samples  []stk
		n        int
		wantFlat []TopEntry
		wantCum  []TopEntry
	}{
		{
			// flat goes to the leaf, cum to every frame; ties sort by name.
			name: "simple",
			samples: []stk{
				{[]string{"leaf", "mid", "main"}, 30},
				{[]string{"mid", "main"}, 10},
				{[]string{"other", "main"}, 60},
			},
			n: 10,
			wantFlat: []TopEntry{
				{"other", 60, 60, 60, 60}, {"leaf", 30, 30, 30, 30}, {"mid", 10, 10, 40, 40}, {"main", 0, 0, 100, 100},
			},
			wantCum: []TopEntry{
				{"main", 0, 0, 100, 100}, {"other", 60, 60, 60, 60}, {"mid", 10, 10, 40, 40}, {"leaf", 30, 30, 30, 30},
			},
		},
		{
			// recursion: fib appears three times in one stack but counts once in cum.
			name: "recursion counted once",
			samples: []stk{
				{[]string{"fib", "fib", "fib", "main"}, 50},
				{[]string{"main"}, 50},
			},
			n:        10,
			wantFlat: []TopEntry{{"fib", 50, 50, 50, 50}, {"main", 50, 50, 100, 100}},
			wantCum:  []TopEntry{{"main", 50, 50, 100, 100}, {"fib", 50, 50, 50, 50}},
		},
		{
			// an inlined callee owns the flat time, as in pprof; n truncates each list.
			name:     "inlining and truncation",
			samples:  []stk{{[]string{"inlined|caller", "main"}, 8}, {[]string{"main"}, 2}},
			n:        1,
			wantFlat: []TopEntry{{"inlined", 8, 80, 8, 80}},
			wantCum:  []TopEntry{{"main", 2, 20, 10, 100}},
		},
		{
			// an empty profile gives empty tables, not NaN percentages.
			name:     "empty",
			n:        5,
			wantFlat: []TopEntry{},
			wantCum:  []TopEntry{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TopFunctions(fakeProfile(tt.samples...), "cpu", tt.n)
			if err != nil {
				t.Fatalf("TopFunctions: %v", err)
			}
			if !reflect.DeepEqual(got.ByFlat, tt.wantFlat) {
				t.Errorf("ByFlat = %+v, want %+v", got.ByFlat, tt.wantFlat)
			}
			if !reflect.DeepEqual(got.ByCum, tt.wantCum) {
				t.Errorf("ByCum = %+v, want %+v", got.ByCum, tt.wantCum)
			}
		})
	}
}

func TestTopFunctionsSampleType(t *testing.T) {
	p := fakeProfile(stk{[]string{"a"}, 5})
	if _, err := TopFunctions(p, "alloc_space", 5); err == nil || !strings.Contains(err.Error(), "has samples, cpu") {
		t.Errorf("TopFunctions(alloc_space) error = %v, want one listing the sample types", err)
	}
	got, err := TopFunctions(p, "samples", 5)
	if err != nil || got.Total != 1 || got.Unit != "count" {
		t.Errorf("TopFunctions(samples) = %+v, %v; want total 1 in count", got, err)
	}
	// "" means the last sample type when the profile names no default.
	if got, _ := TopFunctions(p, "", 5); got.SampleType != "cpu" {
		t.Errorf("TopFunctions(\"\").SampleType = %q, want cpu", got.SampleType)
	}
}

func TestCPUShares(t *testing.T) {
	tests := []struct {
		name    string
		samples []stk
		want    Shares
	}{
		{
			// background marking is GC; mallocgc under user code is allocation.
			name: "gc and alloc apart",
			samples: []stk{
				{[]string{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"}, 25},
				{[]string{"runtime.mallocgc", "runtime.newobject", "main.handler"}, 25},
				{[]string{"main.handler"}, 50},
			},
			want: Shares{GCPct: 25, AllocPct: 25},
		},
		{
			// an assist inside mallocgc counts as both GC and allocation.
			name: "assist overlaps",
			samples: []stk{
				{[]string{"runtime.gcDrainN", "runtime.gcAssistAlloc", "runtime.mallocgc", "main.f"}, 10},
				{[]string{"main.f"}, 30},
			},
			want: Shares{GCPct: 25, AllocPct: 25},
		},
		{
			// size-class variants of mallocgc (Go 1.24+) count as allocation.
			name:    "mallocgc variant",
			samples: []stk{{[]string{"runtime.mallocgcSmallNoscan", "runtime.mallocgc", "main.f"}, 1}, {[]string{"main.f"}, 3}},
			want:    Shares{AllocPct: 25},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CPUShares(fakeProfile(tt.samples...), "cpu")
			if err != nil || got != tt.want {
				t.Errorf("CPUShares = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestDiffTop(t *testing.T) {
	before, _ := TopFunctions(fakeProfile(
		stk{[]string{"log", "mw", "main"}, 40},
		stk{[]string{"handler", "mw", "main"}, 60},
	), "cpu", 10)
	after, _ := TopFunctions(fakeProfile(
		stk{[]string{"log", "mw", "main"}, 10},
		stk{[]string{"handler", "mw", "main"}, 80},
		stk{[]string{"json", "main"}, 10},
	), "cpu", 10)
	got := DiffTop(before, after)
	want := []Delta{
		// log shrank most (40% -> 10%), handler grew 20 points, json is new, mw lost 10 cum points.
		{Function: "log", FlatPctBefore: 40, FlatPctAfter: 10, CumPctBefore: 40, CumPctAfter: 10, FlatDelta: -30, CumDelta: -30},
		{Function: "handler", FlatPctBefore: 60, FlatPctAfter: 80, CumPctBefore: 60, CumPctAfter: 80, FlatDelta: 20, CumDelta: 20},
		{Function: "json", FlatPctAfter: 10, CumPctAfter: 10, FlatDelta: 10, CumDelta: 10},
		{Function: "mw", CumPctBefore: 100, CumPctAfter: 90, CumDelta: -10},
	}
	if len(got) != len(want) {
		t.Fatalf("DiffTop returned %d deltas %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Function != w.Function || !near(g.FlatDelta, w.FlatDelta) || !near(g.CumDelta, w.CumDelta) ||
			!near(g.CumPctBefore, w.CumPctBefore) || !near(g.CumPctAfter, w.CumPctAfter) {
			t.Errorf("DiffTop[%d] = %+v, want %+v", i, g, w)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestFlame(t *testing.T) {
	g, err := Flame(fakeProfile(
		stk{[]string{"b", "a", "main"}, 3},
		stk{[]string{"c", "a", "main"}, 5},
		stk{[]string{"a|main"}, 2}, // a inlined into main: two frames from one location
		stk{[]string{"d"}, 0},      // zero-valued samples are dropped
	), "")
	if err != nil {
		t.Fatal(err)
	}
	var render func(f *Frame) string
	render = func(f *Frame) string {
		s := f.Name + ":" + itoa(f.Value)
		if len(f.Children) > 0 {
			var kids []string
			for _, c := range f.Children {
				kids = append(kids, render(c))
			}
			s += "(" + strings.Join(kids, " ") + ")"
		}
		return s
	}
	want := "root:10(main:10(a:10(c:5 b:3)))"
	if got := render(g.Root); got != want {
		t.Errorf("Flame tree = %s, want %s", got, want)
	}
	if g.Unit != "nanoseconds" || g.SampleType != "cpu" {
		t.Errorf("Flame type = %s/%s, want cpu/nanoseconds", g.SampleType, g.Unit)
	}
}

func itoa(v int64) string { return strings.TrimSpace(formatValue(v, "count")) }

func TestTopTableStringGolden(t *testing.T) {
	tab, err := TopFunctions(fakeProfile(
		stk{[]string{"fmt.Sprintf", "main.(*logMiddleware).ServeHTTP", "main.main"}, 400_000_000},
		stk{[]string{"main.handler", "main.main"}, 550_000_000},
		stk{[]string{"runtime.scanobject", "runtime.gcBgMarkWorker"}, 50_000_000},
	), "cpu", 4)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "top_cum.golden.txt", []byte(tab.String()))
}

func TestAnalyzeJSONRoundTrip(t *testing.T) {
	p := fakeProfile(
		stk{[]string{"runtime.mallocgc", "main.handler", "main.main"}, 30},
		stk{[]string{"main.handler", "main.main"}, 70},
	)
	var raw bytes.Buffer
	if err := p.Write(&raw); err != nil {
		t.Fatal(err)
	}
	// A CPU profile handed in as heap lacks alloc_space: a warning, not a failure.
	profs := &Profiles{CPU: &Profile{Kind: KindCPU, Raw: raw.Bytes(), Parsed: p}, Heap: &Profile{Kind: KindHeap, Parsed: p}}
	a, warns := Analyze(profs, 5)
	if len(warns) != 2 || !strings.Contains(warns[0], `no sample type "alloc_space"`) {
		t.Errorf("Analyze warnings = %q, want two about missing heap sample types", warns)
	}
	if a.CPU == nil || a.Shares == nil || a.Shares.AllocPct != 30 || a.Flame == nil || a.AllocSpace != nil || a.Goroutines != nil {
		t.Fatalf("Analyze = %+v, want CPU parts only, alloc 30%%", a)
	}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back Analysis
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	if !reflect.DeepEqual(back, a) {
		t.Errorf("Analysis JSON round trip changed it:\n got %+v\nwant %+v", back, a)
	}
}
