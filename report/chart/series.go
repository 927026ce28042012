package chart

import (
	"math"

	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Look of the series lines and markers.
var (
	lineWidth   = vg.Points(1.5)
	dashPattern = []vg.Length{vg.Points(6), vg.Points(3)}
	markerSize  = vg.Points(3)
	// maxMarked is the most points a series may have and still get a marker on
	// every point; longer series (timelines) mark only isolated points.
	maxMarked = 60
	markers   = []draw.GlyphDrawer{
		draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.RingGlyph{},
		draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{},
	}
)

// seriesPlot draws one series as a broken line (NaN ends a segment) with a
// marker on every point. norm maps a y value to [0, 1] on its own axis, so
// left and right series share the code.
type seriesPlot struct {
	xs, ys []float64
	norm   func(float64) float64
	line   draw.LineStyle
	glyph  draw.GlyphStyle
}

// marked reports whether point i gets a marker: always when it has no
// neighbour to draw a line to, otherwise when the series is short.
func (sp *seriesPlot) marked(i int) bool {
	if len(sp.ys) <= maxMarked {
		return true
	}
	prev := i > 0 && !math.IsNaN(sp.ys[i-1])
	next := i+1 < len(sp.ys) && !math.IsNaN(sp.ys[i+1])
	return !prev && !next
}

// newSeriesPlot returns the plotter of series i of c, positioned at xs.
func newSeriesPlot(c Chart, i int, xs []float64, norm func(float64) float64) *seriesPlot {
	s := c.Series[i]
	col := c.seriesColor(i)
	sp := &seriesPlot{
		xs:    xs,
		ys:    s.Y,
		norm:  norm,
		line:  draw.LineStyle{Color: col, Width: lineWidth},
		glyph: draw.GlyphStyle{Color: col, Radius: markerSize, Shape: markers[i%len(markers)]},
	}
	if s.Dashed {
		sp.line.Dashes = dashPattern
	}
	return sp
}

// plot draws the series on the data area c of frame f.
func (sp *seriesPlot) plot(c draw.Canvas, f *frame) {
	var seg, pts []vg.Point
	flush := func() {
		if len(seg) > 1 {
			c.StrokeLines(sp.line, c.ClipLinesXY(seg)...)
		}
		seg = nil
	}
	for i, y := range sp.ys {
		if math.IsNaN(y) {
			flush()
			continue
		}
		pt := vg.Point{X: c.X(f.normX(sp.xs[i])), Y: c.Y(sp.norm(y))}
		seg = append(seg, pt)
		if sp.marked(i) {
			pts = append(pts, pt)
		}
	}
	flush()
	for _, pt := range pts {
		c.DrawGlyph(sp.glyph, pt)
	}
}

// legendEntry is one item of the legend: a swatch of the line and marker, and a name.
type legendEntry struct {
	name  string
	line  draw.LineStyle
	glyph draw.GlyphStyle
}

// legend lays entries out in centred rows above the plot, so it never covers data.
type legend struct {
	entries []legendEntry
	style   text.Style
}

// Legend geometry.
var (
	swatchWidth = vg.Points(28)
	swatchGap   = vg.Points(4)
	entryGap    = vg.Points(16)
)

// rows splits the entries into rows no wider than width.
func (l legend) rows(width vg.Length) [][]legendEntry {
	var rows [][]legendEntry
	var row []legendEntry
	var w vg.Length
	for _, e := range l.entries {
		ew := l.entryWidth(e)
		if len(row) > 0 && w+entryGap+ew > width {
			rows = append(rows, row)
			row, w = nil, 0
		}
		if len(row) > 0 {
			w += entryGap
		}
		row = append(row, e)
		w += ew
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	return rows
}

// entryWidth returns the width of one entry.
func (l legend) entryWidth(e legendEntry) vg.Length {
	return swatchWidth + swatchGap + l.style.Width(e.name)
}

// rowHeight returns the height of one legend row.
func (l legend) rowHeight() vg.Length {
	return max(l.style.Height("Xg"), 2*markerSize) + vg.Points(4)
}

// height returns the height the legend needs in a canvas of the given width.
func (l legend) height(width vg.Length) vg.Length {
	return vg.Length(len(l.rows(width))) * l.rowHeight()
}

// draw draws the legend rows from the top of c downwards.
func (l legend) draw(c draw.Canvas) {
	y := c.Max.Y
	for _, row := range l.rows(c.Max.X - c.Min.X) {
		var w vg.Length
		for i, e := range row {
			if i > 0 {
				w += entryGap
			}
			w += l.entryWidth(e)
		}
		x := c.Center().X - w/2
		mid := y - l.rowHeight()/2
		for _, e := range row {
			if e.line.Width > 0 {
				c.StrokeLine2(e.line, x, mid, x+swatchWidth, mid)
			}
			c.DrawGlyphNoClip(e.glyph, vg.Point{X: x + swatchWidth/2, Y: mid})
			x += swatchWidth + swatchGap
			st := l.style
			st.XAlign, st.YAlign = draw.XLeft, draw.YCenter
			c.FillText(st, vg.Point{X: x, Y: mid}, e.name)
			x += l.style.Width(e.name) + entryGap
		}
		y -= l.rowHeight()
	}
}
