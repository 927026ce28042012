package chart

import (
	"image/color"
	"math"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Mark is a vertical line at one x position, labelled at its top: the peak and knee of a
// sweep, or where each level starts on a timeline.
type Mark struct {
	// At is the x position: an index into X on a category axis, an XNum value otherwise.
	At    float64 `json:"at"`
	Label string  `json:"label"`
}

// RefLine is a horizontal reference line on the left axis, labelled at its right end, e.g.
// 100% on a success-rate chart.
type RefLine struct {
	Y     float64 `json:"y"`
	Label string  `json:"label"`
}

// Look of marks and reference lines: dashed grey, under the series.
var (
	markStyle = draw.LineStyle{Color: color.Gray{Y: 0x70}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	markText  = vg.Points(9)
)

// validateMarks appends the problems with c's marks and reference lines.
func (c Chart) validateMarks(bad func(format string, args ...any)) {
	for i, m := range c.Marks {
		switch {
		case math.IsNaN(m.At) || math.IsInf(m.At, 0):
			bad("chart: mark %d (%q) is at %v; want a finite x", i, m.Label, m.At)
		case c.X != nil && (m.At < 0 || m.At > float64(len(c.X)-1)):
			bad("chart: mark %d (%q) is at %v, outside the %d categories", i, m.Label, m.At, len(c.X))
		}
	}
	for i, r := range c.RefLines {
		if math.IsNaN(r.Y) || math.IsInf(r.Y, 0) || (c.LogY && r.Y <= 0) {
			bad("chart: reference line %d (%q) at %v cannot be drawn on the left axis", i, r.Label, r.Y)
		}
	}
}

// marksPlot draws the marks and reference lines of a chart.
type marksPlot struct {
	marks []Mark
	refs  []RefLine
}

// plot draws the marks and reference lines on the data area c of frame f.
func (mp marksPlot) plot(c draw.Canvas, f *frame) {
	st := style(markText, false)
	st.Color = markStyle.Color
	for _, r := range mp.refs {
		y := c.Y(f.normY(r.Y))
		if y < c.Min.Y || y > c.Max.Y {
			continue
		}
		c.StrokeLine2(markStyle, c.Min.X, y, c.Max.X, y)
		if label := cleanText(r.Label); label != "" {
			rs := st
			rs.XAlign, rs.YAlign = draw.XRight, draw.YBottom
			c.FillText(rs, vg.Point{X: c.Max.X - vg.Points(2), Y: y + vg.Points(1)}, label)
		}
	}
	for i, m := range mp.marks {
		x := c.X(f.normX(m.At))
		if x < c.Min.X || x > c.Max.X {
			continue
		}
		c.StrokeLine2(markStyle, x, c.Min.Y, x, c.Max.Y)
		if label := cleanText(m.Label); label != "" {
			ms := st
			ms.XAlign, ms.YAlign = draw.XLeft, draw.YTop
			// Labels of neighbouring marks step down so that they do not overwrite each other.
			dy := vg.Length(i%3) * ms.Height(label)
			c.FillText(ms, vg.Point{X: x + vg.Points(2), Y: c.Max.Y - vg.Points(1) - dy}, label)
		}
	}
}
