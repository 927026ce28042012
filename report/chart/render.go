package chart

import (
	"image/color"
	"math"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Fonts and spacing of the chart furniture.
var (
	sansFont   = font.Font{Typeface: "Liberation", Variant: "Sans"}
	titleSize  = vg.Points(13)
	labelSize  = vg.Points(11)
	tickSize   = vg.Points(10)
	margin     = vg.Points(8)
	axisPad    = vg.Points(5) // gap between the data area and an axis line, as on the left
	tickLength = vg.Points(6)
	gridStyle  = draw.LineStyle{Color: color.Gray{Y: 0xDD}, Width: vg.Points(0.5)}
	axisStyle  = draw.LineStyle{Color: color.Black, Width: vg.Points(0.75)}
	white      = color.RGBA{0xFF, 0xFF, 0xFF, 0xFF}
)

// style returns a plain text style of the given size.
func style(size vg.Length, bold bool) text.Style {
	f := sansFont
	if bold {
		f.Weight = xfont.WeightBold
	}
	return text.Style{
		Color:   color.Black,
		Font:    font.From(f, size),
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
		Handler: textHandler(),
	}
}

// axes holds the computed ranges and ticks of a chart.
type axes struct {
	xs         []float64 // x position of each point
	x          Range
	xTicks     []tick
	left       Range
	leftTicks  []tick
	right      Range
	rightTicks []tick
	hasRight   bool
}

// dataRange returns the extent of the non-NaN values of the left or right series.
func (c Chart) dataRange(right bool) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		if s.Right != right {
			continue
		}
		for _, y := range s.Y {
			if !math.IsNaN(y) {
				lo, hi, ok = math.Min(lo, y), math.Max(hi, y), true
			}
		}
	}
	return lo, hi, ok
}

// axes computes the ranges and ticks for a plot area of the given size.
func (c Chart) axes(w, h vg.Length) axes {
	var a axes
	yTarget := int(math.Max(2, math.Min(8, float64(h/vg.Points(45)))))
	xTarget := int(math.Max(2, math.Min(10, float64(w/vg.Points(70)))))

	if c.X != nil {
		a.xs = make([]float64, len(c.X))
		for i, l := range c.X {
			a.xs[i] = float64(i)
			a.xTicks = append(a.xTicks, tick{Value: float64(i), Label: cleanText(l)})
		}
		a.x = Range{-0.5, float64(len(c.X)) - 0.5}
	} else {
		a.xs = c.XNum
		lo, hi := c.XNum[0], c.XNum[0]
		for _, x := range c.XNum {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		if lo == hi {
			lo, hi = lo-1, hi+1
		}
		a.x = Range{lo, hi}
		a.xTicks = linearTicks(lo, hi, xTarget)
	}

	lo, hi, ok := c.dataRange(false)
	if c.X == nil && len(c.Dots) > 0 {
		a.x, lo, hi, ok = c.dotsRange(a.x, lo, hi, ok)
		a.xTicks = linearTicks(a.x.Min, a.x.Max, xTarget)
	}
	for _, r := range c.RefLines {
		lo, hi, ok = math.Min(lo, r.Y), math.Max(hi, r.Y), true
	}
	switch {
	case c.YRange != nil:
		a.left = *c.YRange
	case c.LogY:
		a.left = logRange(lo, hi, ok)
	default:
		a.left = linearRange(lo, hi, ok)
	}
	if c.LogY {
		a.leftTicks = logTicks(a.left.Min, a.left.Max)
	} else {
		a.leftTicks = linearTicks(a.left.Min, a.left.Max, yTarget)
	}

	for _, s := range c.Series {
		a.hasRight = a.hasRight || s.Right
	}
	if a.hasRight {
		a.right = linearRange(c.dataRange(true))
		if c.YRightRange != nil {
			a.right = *c.YRightRange
		}
		a.rightTicks = linearTicks(a.right.Min, a.right.Max, yTarget)
	}
	return a
}

// draw renders the chart on dc. The chart must be valid.
func (c Chart) draw(dc draw.Canvas) {
	dc.SetColor(white)
	dc.Fill(dc.Rectangle.Path())
	area := draw.Crop(dc, margin, -margin, margin/2, -margin)
	width := area.Max.X - area.Min.X

	if title := cleanText(c.Title); title != "" {
		st, title := fitText(style(titleSize, true), title, width)
		area.FillText(st, vg.Point{X: area.Center().X, Y: area.Max.Y}, title)
		area.Max.Y -= st.Height(title) + margin/2
	}

	lg := legend{style: style(tickSize, false)}
	for i, s := range c.Series {
		if cleanText(s.Name) == "" {
			continue
		}
		sp := newSeriesPlot(c, i, nil, nil)
		if len(s.Y) > maxMarked {
			sp.glyph.Shape = nil // the line has no markers either
		}
		lg.entries = append(lg.entries, legendEntry{name: cleanText(s.Name), line: sp.line, glyph: sp.glyph})
	}
	if name := cleanText(c.DotsName); name != "" && len(c.Dots) > 0 {
		lg.entries = append(lg.entries, legendEntry{name: name, glyph: dotGlyph})
	}
	lg.draw(area)
	area.Max.Y -= lg.height(width) + margin/2

	a := c.axes(width, area.Max.Y-area.Min.Y)
	f := &frame{x: a.x, y: a.left, logY: c.LogY, xTicks: a.xTicks, yTicks: a.leftTicks,
		xLabel: cleanText(c.XLabel), yLabel: cleanText(c.YLabel)}
	tickStyle := tickStyle()
	tickStyle.XAlign, tickStyle.YAlign = draw.XLeft, draw.YCenter
	labelStyle := style(labelSize, false)
	labelStyle.Rotation = math.Pi / 2
	labelStyle.YAlign = draw.YTop
	rightLabel := cleanText(c.YRightLabel)

	rightW := margin
	if a.hasRight {
		rightW = axisPad + tickLength + tickStyle.Width(" ") + tickLabelWidth(tickStyle, a.rightTicks)
		if rightLabel != "" {
			rightW += tickStyle.Width(" ") + labelStyle.Height(rightLabel)
		}
	}
	plotArea := draw.Crop(area, 0, -rightW, 0, 0)
	thinCategories(f, plotArea)
	data := f.draw(plotArea)
	if len(c.Marks) > 0 || len(c.RefLines) > 0 {
		marksPlot{marks: c.Marks, refs: c.RefLines}.plot(data, f)
	}
	rightNorm := func(y float64) float64 { return (y - a.right.Min) / (a.right.Max - a.right.Min) }
	for i, s := range c.Series {
		norm := f.normY
		if s.Right {
			norm = rightNorm
		}
		newSeriesPlot(c, i, a.xs, norm).plot(data, f)
	}
	plotDots(data, f, c.Dots)
	if a.hasRight {
		drawRightAxis(data, a, tickStyle, labelStyle, rightLabel)
	}
}

// thinCategories leaves only every k-th category label when they would overlap.
func thinCategories(f *frame, area draw.Canvas) {
	if len(f.xTicks) < 2 || f.x.Min != -0.5 {
		return
	}
	dc := f.dataArea(area)
	slot := (dc.Max.X - dc.Min.X) / vg.Length(len(f.xTicks))
	need := tickLabelWidth(tickStyle(), f.xTicks) + vg.Points(6)
	k := int(math.Ceil(float64(need / slot)))
	if k <= 1 {
		return
	}
	ticks := make([]tick, len(f.xTicks))
	for i, t := range f.xTicks {
		ticks[i] = tick{Value: t.Value}
		if i%k == 0 {
			ticks[i].Label = t.Label
		}
	}
	f.xTicks = ticks
}

// drawRightAxis draws the right y axis beside the data area dc.
func drawRightAxis(dc draw.Canvas, a axes, tickStyle, labelStyle text.Style, label string) {
	x := dc.Max.X + axisPad
	dc.StrokeLine2(axisStyle, x, dc.Min.Y, x, dc.Max.Y)
	space := tickStyle.Width(" ")
	for _, t := range a.rightTicks {
		y := dc.Y((t.Value - a.right.Min) / (a.right.Max - a.right.Min))
		if !dc.ContainsY(y) {
			continue
		}
		dc.StrokeLine2(axisStyle, x, y, x+tickLength, y)
		dc.FillText(tickStyle, vg.Point{X: x + tickLength + space, Y: y}, t.Label)
	}
	if label != "" {
		lx := x + tickLength + space + tickLabelWidth(tickStyle, a.rightTicks) + space
		dc.FillText(labelStyle, vg.Point{X: lx, Y: dc.Center().Y}, label)
	}
}

// tickLabelWidth returns the width of the widest tick label.
func tickLabelWidth(st text.Style, ticks []tick) vg.Length {
	var w vg.Length
	for _, t := range ticks {
		w = max(w, st.Width(t.Label))
	}
	return w
}

// fitText shrinks the font, then shortens the text with an ellipsis, until it fits width.
func fitText(st text.Style, s string, width vg.Length) (text.Style, string) {
	for st.Width(s) > width && st.Font.Size > vg.Points(9) {
		st.Font.Size -= vg.Points(1)
	}
	r := []rune(s)
	for len(r) > 1 && st.Width(s) > width {
		r = r[:len(r)-1]
		s = string(r) + "…"
	}
	return st, s
}
