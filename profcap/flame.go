package profcap

import (
	"bufio"
	"cmp"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// Frame is a node of a flame graph: a function reached by one call path,
// with the total value of the samples under it.
type Frame struct {
	Name     string   `json:"name"`
	Value    int64    `json:"value"`
	Children []*Frame `json:"children,omitempty"`
}

// FlameGraph is the call tree of one sample type, rooted at a synthetic
// "root" frame whose value is the profile total.
type FlameGraph struct {
	SampleType string `json:"sample_type"`
	Unit       string `json:"unit"`
	Root       *Frame `json:"root"`
}

// Flame builds the flame graph of sample type typ ("" for the default).
// Children are ordered by value, largest first, then by name.
func Flame(p *profile.Profile, typ string) (FlameGraph, error) {
	idx, err := sampleIndex(p, typ)
	if err != nil {
		return FlameGraph{}, err
	}
	root := &Frame{Name: "root"}
	index := map[*Frame]map[string]*Frame{}
	var buf []string
	for _, s := range p.Sample {
		if idx >= len(s.Value) || s.Value[idx] == 0 {
			continue
		}
		v := s.Value[idx]
		root.Value += v
		buf = stack(s, buf)
		node := root
		for i := len(buf) - 1; i >= 0; i-- {
			kids := index[node]
			if kids == nil {
				kids = map[string]*Frame{}
				index[node] = kids
			}
			child := kids[buf[i]]
			if child == nil {
				child = &Frame{Name: buf[i]}
				kids[buf[i]] = child
				node.Children = append(node.Children, child)
			}
			child.Value += v
			node = child
		}
	}
	root.sort()
	return FlameGraph{SampleType: p.SampleType[idx].Type, Unit: p.SampleType[idx].Unit, Root: root}, nil
}

// Pruned returns a copy of g without the frames worth less than minShare (0..1) of the
// total, which a flame graph could not draw anyway; their value stays in their parents.
func (g FlameGraph) Pruned(minShare float64) FlameGraph {
	if g.Root == nil {
		return g
	}
	limit := int64(minShare * float64(g.Root.Value))
	g.Root = g.Root.pruned(limit)
	return g
}

func (f *Frame) pruned(limit int64) *Frame {
	c := &Frame{Name: f.Name, Value: f.Value}
	for _, k := range f.Children {
		if k.Value >= limit && k.Value > 0 {
			c.Children = append(c.Children, k.pruned(limit))
		}
	}
	return c
}

func (f *Frame) sort() {
	slices.SortFunc(f.Children, func(a, b *Frame) int {
		if c := cmp.Compare(b.Value, a.Value); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, c := range f.Children {
		c.sort()
	}
}

// SVG layout constants: the graph is an icicle (root on top), SVGWidth
// pixels wide, one row of svgRow pixels per stack depth.
const (
	SVGWidth    = 1200
	svgRow      = 18
	svgPad      = 10
	svgCharW    = 6.6 // approximate advance of an 11px monospace glyph
	svgMinWidth = 0.3 // frames narrower than this are not drawn
)

// WriteSVG renders g as a self-contained icicle graph (no scripts, no
// external references). Each frame's <title> gives its full name, value and
// share; all names are escaped. The output depends only on g.
func (g FlameGraph) WriteSVG(w io.Writer, title string) error {
	if g.Root == nil {
		return fmt.Errorf("rendering flame graph: no root frame")
	}
	depth := g.Root.depth(0)
	height := 2*svgPad + 24 + depth*svgRow
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="monospace" font-size="11">
<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>
<text x="%d" y="%d" font-size="14">%s</text>
`, SVGWidth, height, SVGWidth, height, SVGWidth, height, svgPad, svgPad+14, escape(title))
	scale := float64(SVGWidth-2*svgPad) / float64(max(g.Root.Value, 1))
	g.writeFrame(bw, g.Root, svgPad, svgPad+24, scale)
	fmt.Fprintln(bw, "</svg>")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("rendering flame graph: %w", err)
	}
	return nil
}

func (g FlameGraph) writeFrame(w io.Writer, f *Frame, x float64, y int, scale float64) {
	width := float64(f.Value) * scale
	if width < svgMinWidth {
		return
	}
	share := pct(f.Value, g.Root.Value)
	fmt.Fprintf(w, "<g><title>%s (%s, %.2f%%)</title>", escape(f.Name), escape(formatValue(f.Value, g.Unit)), share)
	fmt.Fprintf(w, `<rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s" rx="2"/>`, x, y, width, svgRow-1, color(f.Name))
	if chars := int((width - 6) / svgCharW); chars >= 3 {
		label := f.Name
		if r := []rune(label); len(r) > chars {
			label = string(r[:chars-2]) + ".."
		}
		fmt.Fprintf(w, `<text x="%.2f" y="%d">%s</text>`, x+3, y+svgRow-5, escape(label))
	}
	fmt.Fprintln(w, "</g>")
	for _, c := range f.Children {
		g.writeFrame(w, c, x, y+svgRow, scale)
		x += float64(c.Value) * scale
	}
}

func (f *Frame) depth(d int) int {
	best := d + 1
	for _, c := range f.Children {
		best = max(best, c.depth(d+1))
	}
	return best
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

// escape makes s safe as SVG text or attribute content, dropping control
// characters XML cannot carry.
func escape(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' || r == 0xFFFE || r == 0xFFFF {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	return xmlEscaper.Replace(s)
}

// color picks a warm fill from a hash of the name, so a function keeps its
// colour across renders; runtime frames are shaded apart.
func color(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	if strings.HasPrefix(name, "runtime.") {
		return fmt.Sprintf("rgb(%d,%d,%d)", 120+v%40, 160+(v>>8)%50, 200+(v>>16)%40)
	}
	return fmt.Sprintf("rgb(%d,%d,%d)", 215+v%40, 90+(v>>8)%110, 40+(v>>16)%50)
}

// formatValue prints v in unit: durations for nanoseconds, MB for bytes.
func formatValue(v int64, unit string) string {
	switch unit {
	case "nanoseconds":
		return time.Duration(v).Round(time.Microsecond).String()
	case "bytes":
		switch {
		case v >= 1<<30 || v <= -1<<30:
			return fmt.Sprintf("%.2fGB", float64(v)/(1<<30))
		case v >= 1<<20 || v <= -1<<20:
			return fmt.Sprintf("%.2fMB", float64(v)/(1<<20))
		case v >= 1<<10 || v <= -1<<10:
			return fmt.Sprintf("%.2fkB", float64(v)/(1<<10))
		}
		return fmt.Sprintf("%dB", v)
	case "", "count":
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%d %s", v, unit)
}

// FormatValue prints v in unit as the top tables do: durations for nanoseconds, kB/MB/GB for bytes.
func FormatValue(v int64, unit string) string { return formatValue(v, unit) }
