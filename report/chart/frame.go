package chart

import (
	"math"
	"sync"

	"codeberg.org/go-fonts/liberation/liberationsansbold"
	"codeberg.org/go-fonts/liberation/liberationsansregular"
	xfont "golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// textHandler lays text out in Liberation Sans (regular and bold, the two faces the charts
// use), parsed on the first chart drawn rather than when the program starts.
var textHandler = sync.OnceValue(func() text.Handler {
	var coll font.Collection
	for _, f := range []struct {
		weight xfont.Weight
		ttf    []byte
	}{{xfont.WeightNormal, liberationsansregular.TTF}, {xfont.WeightBold, liberationsansbold.TTF}} {
		face, err := opentype.Parse(f.ttf)
		if err != nil {
			panic("chart: parsing the embedded Liberation Sans: " + err.Error()) // render turns it into an error
		}
		fnt := sansFont
		fnt.Weight = f.weight
		coll = append(coll, font.Face{Font: fnt, Face: face})
	}
	return text.Plain{Fonts: font.NewCache(coll)}
})

// tick is one axis tick: its value and label ("" for an unlabelled minor tick).
type tick struct {
	Value float64
	Label string
}

// frame is a chart's x axis and left y axis: their ranges, ticks and labels, the mapping of
// data to the data area, and the drawing of the axes and the grid.
type frame struct {
	x, y           Range
	logY           bool
	xTicks, yTicks []tick
	xLabel, yLabel string
}

// normX maps an x value to [0, 1] across the data area.
func (f *frame) normX(v float64) float64 { return (v - f.x.Min) / (f.x.Max - f.x.Min) }

// normY maps a left-axis value to [0, 1] up the data area (log10 when the axis is).
func (f *frame) normY(v float64) float64 {
	if f.logY {
		lo := math.Log(f.y.Min)
		return (math.Log(v) - lo) / (math.Log(f.y.Max) - lo)
	}
	return (v - f.y.Min) / (f.y.Max - f.y.Min)
}

// tickGap is the space between a tick and its label, and between tick labels and an axis label.
var tickGap = vg.Points(3)

// tickStyle is the style of tick labels.
func tickStyle() text.Style { return style(tickSize, false) }

// dataArea returns where the data is drawn inside area: right of the left axis, above the
// x axis, inset by a marker's size so markers at the edges are whole.
func (f *frame) dataArea(area draw.Canvas) draw.Canvas {
	ts, ls := tickStyle(), style(labelSize, false)
	bottom := axisPad + tickLength + tickGap + ts.Height("0")
	if f.xLabel != "" {
		bottom += tickGap + ls.Height(f.xLabel)
	}
	left := axisPad + tickLength + tickGap + tickLabelWidth(ts, f.yTicks)
	if f.yLabel != "" {
		left += tickGap + ls.Height(f.yLabel)
	}
	dc := draw.Crop(area, left, 0, bottom, 0)
	return draw.Crop(dc, markerSize, -markerSize, markerSize, -markerSize)
}

// draw draws the axes, their ticks and labels, and the grid, and returns the data area.
func (f *frame) draw(area draw.Canvas) draw.Canvas {
	dc := f.dataArea(area)
	const eps = 1e-9
	inside := func(n float64) bool { return n >= -eps && n <= 1+eps }
	for _, t := range f.xTicks {
		if n := f.normX(t.Value); t.Label != "" && inside(n) {
			dc.StrokeLine2(gridStyle, dc.X(n), dc.Min.Y, dc.X(n), dc.Max.Y)
		}
	}
	for _, t := range f.yTicks {
		if n := f.normY(t.Value); t.Label != "" && inside(n) {
			dc.StrokeLine2(gridStyle, dc.Min.X, dc.Y(n), dc.Max.X, dc.Y(n))
		}
	}

	ts := tickStyle()
	ya := dc.Min.Y - axisPad // the x axis line
	area.StrokeLine2(axisStyle, dc.Min.X, ya, dc.Max.X, ya)
	for _, t := range f.xTicks {
		n := f.normX(t.Value)
		if !inside(n) {
			continue
		}
		x, l := dc.X(n), tickLength
		if t.Label == "" {
			l /= 2
		}
		area.StrokeLine2(axisStyle, x, ya, x, ya-l)
		area.FillText(ts, vg.Point{X: x, Y: ya - tickLength - tickGap}, t.Label)
	}
	if f.xLabel != "" {
		ls := style(labelSize, false)
		ls.YAlign = draw.YBottom
		area.FillText(ls, vg.Point{X: dc.Center().X, Y: area.Min.Y}, f.xLabel)
	}

	xa := dc.Min.X - axisPad // the left axis line
	area.StrokeLine2(axisStyle, xa, dc.Min.Y, xa, dc.Max.Y)
	ys := ts
	ys.XAlign, ys.YAlign = draw.XRight, draw.YCenter
	for _, t := range f.yTicks {
		n := f.normY(t.Value)
		if !inside(n) {
			continue
		}
		y, l := dc.Y(n), tickLength
		if t.Label == "" {
			l /= 2
		}
		area.StrokeLine2(axisStyle, xa-l, y, xa, y)
		area.FillText(ys, vg.Point{X: xa - tickLength - tickGap, Y: y}, t.Label)
	}
	if f.yLabel != "" {
		ls := style(labelSize, false)
		ls.Rotation = math.Pi / 2
		ls.YAlign = draw.YTop
		area.FillText(ls, vg.Point{X: area.Min.X, Y: dc.Center().Y}, f.yLabel)
	}
	return dc
}
