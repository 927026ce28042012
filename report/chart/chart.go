// Package chart draws the line charts of apiperf reports (QPS and latency vs
// concurrency, percentiles, success rate, timelines, diffs of two runs) as
// deterministic SVG and PNG. A Chart is a plain data struct that renders itself.
package chart

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"
)

// Default canvas size in pixels.
const (
	DefaultWidth  = 960
	DefaultHeight = 540
)

// Smallest accepted canvas size in pixels; below this the labels cannot fit.
const (
	MinWidth  = 240
	MinHeight = 160
)

// Range is a fixed axis range, e.g. {0, 100} for a success rate in percent.
type Range struct {
	Min float64 `json:"min"` // bottom of the axis
	Max float64 `json:"max"` // top of the axis
}

// String prints the range as "[min, max]".
func (r Range) String() string {
	return "[" + strconv.FormatFloat(r.Min, 'g', -1, 64) + ", " + strconv.FormatFloat(r.Max, 'g', -1, 64) + "]"
}

// Series is one line of a chart. Y has one value per x position; NaN means
// "no value here" and breaks the line instead of inventing a point.
type Series struct {
	// Name labels the series in the legend; empty leaves it out of the legend.
	Name string `json:"name"`
	// Y holds one value per x; NaN for none.
	Y []float64 `json:"y"`
	// Right puts the series on the right y axis (its own scale and label).
	Right bool `json:"right,omitempty"`
	// Dashed draws the line dashed, e.g. for run B of a diff.
	Dashed bool `json:"dashed,omitempty"`
	// Color is an optional "#rrggbb"; empty picks the palette colour of the series index.
	Color string `json:"color,omitempty"`
}

// Chart is a line chart with a categorical or numeric x axis and one or two y axes.
// Exactly one of X (categories, evenly spaced) and XNum (numeric x) is set.
// Text fields may hold anything (user or target text): it is escaped in SVG.
type Chart struct {
	// Title is drawn above the legend, shrunk or cut with "…" to fit the width.
	Title string `json:"title,omitempty"`
	// XLabel, YLabel and YRightLabel name the x, left and right axes.
	XLabel      string `json:"x_label,omitempty"`
	YLabel      string `json:"y_label,omitempty"`
	YRightLabel string `json:"y_right_label,omitempty"`
	// X holds category labels such as "200" or "50000", drawn evenly spaced.
	X []string `json:"x,omitempty"`
	// XNum holds numeric x values (e.g. seconds since the start), used when X is nil.
	XNum []float64 `json:"x_num,omitempty"`
	// LogY draws the left y axis on a log10 scale; its values must be > 0 (or NaN).
	LogY bool `json:"log_y,omitempty"`
	// YRange fixes the left axis range; nil autoscales (linear axes start at 0).
	YRange *Range `json:"y_range,omitempty"`
	// YRightRange fixes the right axis range; nil autoscales from 0. The right axis is linear.
	YRightRange *Range `json:"y_right_range,omitempty"`
	// Series are drawn in order, each in the palette colour and marker of its index.
	Series []Series `json:"series"`
	// Marks are labelled vertical lines (the peak, the knee, where a level starts).
	Marks []Mark `json:"marks,omitempty"`
	// Dots are single points on the left axis (numeric x only), drawn as rings above the
	// series, named DotsName in the legend.
	Dots     []Dot  `json:"dots,omitempty"`
	DotsName string `json:"dots_name,omitempty"`
	// RefLines are labelled horizontal lines on the left axis (100% success); autoscaled
	// axes include them.
	RefLines []RefLine `json:"ref_lines,omitempty"`
	// Width and Height are the canvas size in pixels; 0 means DefaultWidth/DefaultHeight.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
}

// palette is the Okabe-Ito colour-blind safe palette (yellow left out: unreadable on white).
var palette = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xFF}, // blue
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0x00, 0x00, 0x00, 0xFF}, // black
}

// size returns the canvas size in pixels, defaults applied.
func (c Chart) size() (w, h int) {
	w, h = c.Width, c.Height
	if w == 0 {
		w = DefaultWidth
	}
	if h == 0 {
		h = DefaultHeight
	}
	return w, h
}

// points returns the number of x positions.
func (c Chart) points() int {
	if c.X != nil {
		return len(c.X)
	}
	return len(c.XNum)
}

// Validate returns every problem with the chart at once, or nil.
func (c Chart) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	switch {
	case c.X != nil && c.XNum != nil:
		bad("chart: both X and XNum are set; use one")
	case c.points() == 0:
		bad("chart: no x values (X or XNum is empty)")
	}
	for i, x := range c.XNum {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			bad("chart: XNum[%d] is %v; x values must be finite", i, x)
		}
	}
	if c.Width < 0 || c.Height < 0 || (c.Width > 0 && c.Width < MinWidth) || (c.Height > 0 && c.Height < MinHeight) {
		bad("chart: size %dx%d is too small; want at least %dx%d pixels (0 for the default)", c.Width, c.Height, MinWidth, MinHeight)
	}
	if len(c.Series) == 0 {
		bad("chart: no series")
	}
	if r := c.YRange; r != nil {
		validateRange(&errs, "YRange", *r, c.LogY)
	}
	if r := c.YRightRange; r != nil {
		validateRange(&errs, "YRightRange", *r, false)
	}
	c.validateMarks(bad)
	c.validateDots(bad)
	n := c.points()
	for i, s := range c.Series {
		name := fmt.Sprintf("series %d (%q)", i, s.Name)
		if len(s.Y) != n {
			bad("chart: %s has %d values, want %d (one per x)", name, len(s.Y), n)
		}
		if s.Color != "" {
			if _, err := parseColor(s.Color); err != nil {
				bad("chart: %s: %w", name, err)
			}
		}
		for j, y := range s.Y {
			switch {
			case math.IsInf(y, 0):
				bad("chart: %s value %d is %v; use NaN for a missing value", name, j, y)
			case c.LogY && !s.Right && y <= 0:
				bad("chart: %s value %d is %v; a log axis needs values > 0 (NaN for none)", name, j, y)
			}
		}
	}
	return errors.Join(errs...)
}

// validateRange appends the problems with a fixed axis range.
func validateRange(errs *[]error, field string, r Range, log bool) {
	switch {
	case math.IsNaN(r.Min) || math.IsNaN(r.Max) || math.IsInf(r.Min, 0) || math.IsInf(r.Max, 0):
		*errs = append(*errs, fmt.Errorf("chart: %s %v is not finite", field, r))
	case r.Min >= r.Max:
		*errs = append(*errs, fmt.Errorf("chart: %s %v is empty; want min < max", field, r))
	case log && r.Min <= 0:
		*errs = append(*errs, fmt.Errorf("chart: %s %v starts at or below 0 on a log axis", field, r))
	}
}

// parseColor parses "#rrggbb".
func parseColor(s string) (color.RGBA, error) {
	if len(s) != 7 || s[0] != '#' {
		return color.RGBA{}, fmt.Errorf("colour %q is not #rrggbb", s)
	}
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil {
		return color.RGBA{}, fmt.Errorf("colour %q is not #rrggbb", s)
	}
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xFF}, nil
}

// seriesColor returns the colour of series i.
func (c Chart) seriesColor(i int) color.RGBA {
	if col, err := parseColor(c.Series[i].Color); err == nil {
		return col
	}
	return palette[i%len(palette)]
}

// cleanText makes user or target supplied text safe to draw and to put in XML:
// invalid UTF-8 is replaced, tabs become spaces and other control characters
// (which XML 1.0 cannot carry even escaped) are dropped. Newlines are kept.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '\t':
			return ' '
		case r < 0x20, r == 0x7F, r >= 0x80 && r < 0xA0, r == 0xFFFE, r == 0xFFFF:
			return -1
		}
		return r
	}, s)
}
