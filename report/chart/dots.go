package chart

import (
	"image/color"
	"math"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Dot is a single point on the left axis, drawn as a marker with no line: one request among
// per-second lines (the slowest requests on a latency chart).
type Dot struct {
	X float64 `json:"x"` // an XNum value (numeric x axis only)
	Y float64 `json:"y"`
}

// dotGlyph is how dots look: black rings, above the series.
var dotGlyph = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(3.5), Shape: draw.RingGlyph{}}

// validateDots appends the problems with c's dots.
func (c Chart) validateDots(bad func(format string, args ...any)) {
	if len(c.Dots) > 0 && c.X != nil {
		bad("chart: dots need a numeric x axis")
	}
	for i, d := range c.Dots {
		if math.IsNaN(d.X) || math.IsInf(d.X, 0) || math.IsNaN(d.Y) || math.IsInf(d.Y, 0) || (c.LogY && d.Y <= 0) {
			bad("chart: dot %d at (%v, %v) cannot be drawn", i, d.X, d.Y)
		}
	}
}

// dotsRange widens the x range and the left y data range to hold the dots.
func (c Chart) dotsRange(x Range, lo, hi float64, ok bool) (Range, float64, float64, bool) {
	for _, d := range c.Dots {
		x.Min, x.Max = math.Min(x.Min, d.X), math.Max(x.Max, d.X)
		lo, hi, ok = math.Min(lo, d.Y), math.Max(hi, d.Y), true
	}
	return x, lo, hi, ok
}

// plotDots draws the dots on the data area c of frame f.
func plotDots(c draw.Canvas, f *frame, dots []Dot) {
	for _, d := range dots {
		p := vg.Point{X: c.X(f.normX(d.X)), Y: c.Y(f.normY(d.Y))}
		if p.X < c.Min.X || p.X > c.Max.X || p.Y < c.Min.Y || p.Y > c.Max.Y {
			continue
		}
		c.DrawGlyph(dotGlyph, p)
	}
}
