package chart

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	nan := math.NaN()
	ok := func() Chart { return Chart{X: []string{"1", "2"}, Series: []Series{{Name: "a", Y: []float64{1, 2}}}} }
	with := func(f func(*Chart)) Chart { c := ok(); f(&c); return c }
	tests := []struct {
		name  string
		chart Chart
		want  []string // substrings of the error; none means valid
	}{
		// The minimal chart is valid.
		{"minimal", ok(), nil},
		// NaN is a missing value, even on a log axis.
		{"nan", with(func(c *Chart) { c.LogY = true; c.Series[0].Y[0] = nan }), nil},
		// Numeric x replaces categories.
		{"numeric x", with(func(c *Chart) { c.X, c.XNum = nil, []float64{0, 0.5} }), nil},
		// A right series may hold zero on a log chart: the right axis is linear.
		{"right zero on log", with(func(c *Chart) {
			c.LogY = true
			c.Series = append(c.Series, Series{Name: "r", Y: []float64{0, 1}, Right: true})
		}), nil},
		// Both kinds of x at once are ambiguous.
		{"both x", with(func(c *Chart) { c.XNum = []float64{1, 2} }), []string{"both X and XNum"}},
		// A chart with nothing on x and no series reports both problems.
		{"empty", Chart{}, []string{"no x values", "no series"}},
		// A series must have one value per x.
		{"short series", with(func(c *Chart) { c.Series[0].Y = []float64{1} }), []string{`series 0 ("a") has 1 values, want 2`}},
		// Infinity is not a missing value.
		{"inf", with(func(c *Chart) { c.Series[0].Y[1] = math.Inf(1) }), []string{"value 1 is +Inf"}},
		// A log axis cannot show zero.
		{"log zero", with(func(c *Chart) { c.LogY = true; c.Series[0].Y[0] = 0 }), []string{"log axis needs values > 0"}},
		// Non-finite numeric x.
		{"nan x", with(func(c *Chart) { c.X, c.XNum = nil, []float64{0, nan} }), []string{"XNum[1] is NaN"}},
		// An empty fixed range.
		{"empty range", with(func(c *Chart) { c.YRange = &Range{100, 100} }), []string{"YRange [100, 100] is empty"}},
		// A log range must start above zero.
		{"log range", with(func(c *Chart) { c.LogY = true; c.YRange = &Range{0, 100} }), []string{"at or below 0 on a log axis"}},
		// A bad right range is reported too.
		{"right range", with(func(c *Chart) { c.YRightRange = &Range{5, 1} }), []string{"YRightRange [5, 1] is empty"}},
		// Colours must be #rrggbb.
		{"colour", with(func(c *Chart) { c.Series[0].Color = "red" }), []string{`colour "red" is not #rrggbb`}},
		// Sizes too small to lay out, or negative.
		{"tiny", with(func(c *Chart) { c.Width, c.Height = 10, -1 }), []string{"size 10x-1 is too small"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.chart.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error containing %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to contain %q", err, w)
				}
			}
			// Rendering refuses an invalid chart with the same error.
			var buf bytes.Buffer
			if err := tt.chart.SVG(&buf); err == nil || buf.Len() != 0 {
				t.Errorf("SVG() of an invalid chart = %v and %d bytes, want an error and nothing written", err, buf.Len())
			}
		})
	}
}

// TestMissingPointsBreakTheLine checks that NaN splits the line and that an
// isolated point gets a marker but no line.
func TestMissingPointsBreakTheLine(t *testing.T) {
	nan := math.NaN()
	c := Chart{
		X:      []string{"a", "b", "c", "d", "e", "f", "g", "h"},
		Series: []Series{{Name: "s", Color: "#123456", Y: []float64{1, 2, nan, 4, 5, nan, 7, nan}}},
	}
	var buf bytes.Buffer
	if err := c.SVG(&buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(buf.String(), `style="fill:none;stroke:#123456;stroke-width:1.5"`)
	marks := strings.Count(buf.String(), `style="fill:#123456"`)
	// One line in the legend, plus a-b and d-e; g stands alone.
	if lines != 3 {
		t.Errorf("SVG() has %d line paths of the series, want 3 (legend, a-b, d-e)", lines)
	}
	// One marker in the legend plus one per value.
	if marks != 6 {
		t.Errorf("SVG() has %d markers of the series, want 6 (legend + 5 values)", marks)
	}
}

func TestLongSeriesMarksOnlyIsolatedPoints(t *testing.T) {
	n := maxMarked + 10
	c := Chart{XNum: make([]float64, n), Series: []Series{{Name: "s", Color: "#123456", Y: make([]float64, n)}}}
	for i := range n {
		c.XNum[i] = float64(i)
		c.Series[0].Y[i] = float64(i % 7)
	}
	c.Series[0].Y[20], c.Series[0].Y[22] = math.NaN(), math.NaN()
	var buf bytes.Buffer
	if err := c.SVG(&buf); err != nil {
		t.Fatal(err)
	}
	// The lone point 21 only: the legend shows no marker for an unmarked line.
	if marks := strings.Count(buf.String(), `style="fill:#123456"`); marks != 1 {
		t.Errorf("SVG() of %d points has %d markers, want 1 (the isolated point)", n, marks)
	}
}

func TestWriteFiles(t *testing.T) {
	base := filepath.Join(t.TempDir(), "x_qps_ttlb")
	if err := qpsChart().WriteFiles(base); err != nil {
		t.Fatalf("WriteFiles(%q) = %v", base, err)
	}
	for _, ext := range []string{".svg", ".png"} {
		st, err := os.Stat(base + ext)
		if err != nil || st.Size() == 0 {
			t.Errorf("WriteFiles(%q) left %s as %v, %v; want a non-empty file", base, ext, st, err)
		}
	}
	bad := filepath.Join(t.TempDir(), "missing-dir", "x")
	if err := qpsChart().WriteFiles(bad); err == nil {
		t.Errorf("WriteFiles(%q) = nil, want an error", bad)
	}
}

func TestManyCategoriesAreThinned(t *testing.T) {
	c := Chart{Width: 480, Height: 300, Series: []Series{{Name: "s"}}}
	for i := range 40 {
		c.X = append(c.X, strings.Repeat("9", 6)+string(rune('a'+i%26)))
		c.Series[0].Y = append(c.Series[0].Y, float64(i))
	}
	var buf bytes.Buffer
	if err := c.SVG(&buf); err != nil {
		t.Fatal(err)
	}
	shown := 0
	for _, s := range xmlText(t, buf.Bytes()) {
		if strings.HasPrefix(s, "999999") {
			shown++
		}
	}
	if shown < 2 || shown >= 40 {
		t.Errorf("SVG() of 40 wide categories at 480 px shows %d labels, want some but not all", shown)
	}
}

func TestLongTitleFits(t *testing.T) {
	st, s := fitText(style(titleSize, true), strings.Repeat("http://127.0.0.1/ ", 40), 300)
	if w := st.Width(s); w > 300 {
		t.Errorf("fitText(...) width = %v, want <= 300", w)
	}
	if !strings.HasSuffix(s, "…") || st.Font.Size >= titleSize {
		t.Errorf("fitText(...) = %q at %v, want a smaller font and an ellipsis", s, st.Font.Size)
	}
}

func TestTicks(t *testing.T) {
	tests := []struct {
		name     string
		got      []tick
		wantLabs string // labelled ticks, space separated
	}{
		// Classic QPS axis: 0 to 50k in steps of 10k, with k suffixes.
		{"linear", linearTicks(0, 50000, 5), "0 10k 20k 30k 40k 50k"},
		// Small values keep the decimals of the step.
		{"decimals", linearTicks(0, 0.5, 5), "0.0 0.1 0.2 0.3 0.4 0.5"},
		// Negative ranges print a plain zero, not -0.
		{"negative", linearTicks(-2, 2, 4), "-2 -1 0 1 2"},
		// Wide log axes label decades only.
		{"log wide", logTicks(0.1, 10000), "0.1 1 10 100 1000 10k"},
		// Narrow log axes also label 2 and 5.
		{"log narrow", logTicks(1, 100), "1 2 5 10 20 50 100"},
	}
	for _, tt := range tests {
		var labs []string
		for _, tk := range tt.got {
			if tk.Label != "" {
				labs = append(labs, tk.Label)
			}
		}
		if got := strings.Join(labs, " "); got != tt.wantLabs {
			t.Errorf("%s: tick labels = %q, want %q", tt.name, got, tt.wantLabs)
		}
	}
}

func TestRanges(t *testing.T) {
	tests := []struct {
		name string
		got  Range
		want Range
	}{
		// Linear axes start at zero and end on a nice step.
		{"qps", linearRange(5150, 41990, true), Range{0, 50000}},
		// Negative data extends below zero.
		{"negative", linearRange(-3, 7, true), Range{-4, 8}},
		// No data at all still gives a drawable axis.
		{"none", linearRange(0, 0, false), Range{0, 1}},
		// All zero.
		{"zeros", linearRange(0, 0, true), Range{0, 1}},
		// Log axes cover whole decades.
		{"log", logRange(0.97, 1780, true), Range{0.1, 10000}},
		// A single power of ten still spans one decade.
		{"log exact", logRange(10, 10, true), Range{10, 100}},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: range = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}
