package chart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apiperf/apiperf/internal/golden"
)

var (
	pngDir = flag.String("pngdir", "", "also write each golden chart as PNG into this directory, to look at")
)

// classicLevels are the concurrency levels of the sweep script.
var classicLevels = []float64{200, 500, 1000, 3000, 5000, 10000, 15000, 20000, 25000, 50000}

// labels prints levels as category labels.
func labels(levels []float64) []string {
	out := make([]string, len(levels))
	for i, l := range levels {
		out[i] = strconv.FormatFloat(l, 'f', -1, 64)
	}
	return out
}

// synth applies f to each level: the charts below draw synthetic curves
// (formulas, not measurements) shaped like a saturating server.
func synth(levels []float64, f func(c float64) float64) []float64 {
	out := make([]float64, len(levels))
	for i, c := range levels {
		out[i] = math.Round(f(c)*100) / 100
	}
	return out
}

const title = "Running: 10s / Threads: 2 / http://127.0.0.1:8080/healthz"

func qpsChart() Chart {
	return Chart{
		Title: title, XLabel: "concurrency", YLabel: "Requests/sec", YRightLabel: "avg latency (ms)",
		X: labels(classicLevels),
		Series: []Series{
			{Name: "QPS", Y: synth(classicLevels, func(c float64) float64 { return 42000 * (1 - math.Exp(-c/1500)) })},
			{Name: "TTLB avg (ms)", Right: true, Y: synth(classicLevels, func(c float64) float64 { return c / 42000 * 1000 / (1 - math.Exp(-c/1500)) })},
		},
	}
}

func latencyChart() Chart {
	var series []Series
	for _, q := range []float64{50, 90, 99, 99.9} {
		series = append(series, Series{
			Name: "p" + strconv.FormatFloat(q, 'f', -1, 64),
			Y:    synth(classicLevels, func(c float64) float64 { return (0.4 + c/400) * (1 + 8*q/(100.5-q)/100) }),
		})
	}
	return Chart{Title: title, XLabel: "concurrency", YLabel: "latency (ms)", X: labels(classicLevels), LogY: true, Series: series}
}

func successChart() Chart {
	return Chart{
		Title: title, XLabel: "concurrency", YLabel: "success rate (%)", X: labels(classicLevels), YRange: &Range{0, 100},
		Series: []Series{{Name: "success", Y: synth(classicLevels, func(c float64) float64 { return 100 / (1 + math.Pow(c/30000, 4)) })}},
	}
}

// diffChart overlays run A (all levels) and run B, which has no 15000 level.
func diffChart() Chart {
	qps := func(c float64) float64 { return 42000 * (1 - math.Exp(-c/1500)) }
	lat := func(c float64) float64 { return c / qps(c) * 1000 }
	bq, bl := synth(classicLevels, func(c float64) float64 { return 1.2 * qps(c) }), synth(classicLevels, func(c float64) float64 { return lat(c) / 1.2 })
	bq[6], bl[6] = math.NaN(), math.NaN()
	return Chart{
		Title: "before vs after", XLabel: "concurrency", YLabel: "Requests/sec", YRightLabel: "avg latency (ms)",
		X: labels(classicLevels),
		Series: []Series{
			{Name: "before QPS", Y: synth(classicLevels, qps)},
			{Name: "before latency", Right: true, Y: synth(classicLevels, lat)},
			{Name: "after QPS", Y: bq, Dashed: true},
			{Name: "after latency", Y: bl, Right: true, Dashed: true},
		},
	}
}

func timelineChart() Chart {
	var xs, qps, p99 []float64
	for i := range 61 {
		t := float64(i) / 2
		xs = append(xs, t)
		qps = append(qps, math.Round(30000+4000*math.Sin(t)))
		p99 = append(p99, math.Round(120+40*math.Cos(t/3)))
	}
	return Chart{
		Title: "timeline", XLabel: "time (s)", YLabel: "Requests/sec", YRightLabel: "p99 (ms)", XNum: xs,
		Series: []Series{{Name: "QPS", Y: qps}, {Name: "p99", Y: p99, Right: true}},
	}
}

// goldens are the charts with golden SVG files.
var goldens = []struct {
	name  string
	chart Chart
}{
	{"qps_ttlb", qpsChart()},
	{"latency", latencyChart()},
	{"successrate", successChart()},
	{"diff_missing", diffChart()},
	{"timeline", timelineChart()},
}

func TestGoldenSVG(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := g.chart.SVG(&buf); err != nil {
				t.Fatalf("SVG() = %v, want nil", err)
			}
			if *pngDir != "" {
				if err := g.chart.WriteFiles(filepath.Join(*pngDir, g.name)); err != nil {
					t.Fatal(err)
				}
			}
			golden.Check(t, g.name+".svg", buf.Bytes())
			if err := wellFormed(buf.Bytes()); err != nil {
				t.Errorf("SVG() is not well-formed XML: %v", err)
			}
		})
	}
}

// wellFormed parses the whole document with encoding/xml.
func wellFormed(doc []byte) error {
	d := xml.NewDecoder(bytes.NewReader(doc))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// xmlText returns the character data of every <text> element of an SVG document.
func xmlText(t *testing.T, doc []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	var out []string
	in := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("parsing SVG: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			in = tok.Name.Local == "text"
		case xml.EndElement:
			in = false
		case xml.CharData:
			if in {
				out = append(out, string(tok))
			}
		}
	}
}

func TestPNG(t *testing.T) {
	for _, g := range goldens {
		for _, size := range [][2]int{{0, 0}, {640, 360}} {
			t.Run(fmt.Sprintf("%s/%dx%d", g.name, size[0], size[1]), func(t *testing.T) {
				c := g.chart
				c.Width, c.Height = size[0], size[1]
				var a, b bytes.Buffer
				if err := c.PNG(&a); err != nil {
					t.Fatalf("PNG() = %v, want nil", err)
				}
				if err := c.PNG(&b); err != nil {
					t.Fatalf("second PNG() = %v, want nil", err)
				}
				if !bytes.Equal(a.Bytes(), b.Bytes()) {
					t.Errorf("PNG() gave different bytes for the same chart")
				}
				img, err := png.Decode(&a)
				if err != nil {
					t.Fatalf("png.Decode(PNG()) = %v", err)
				}
				wantW, wantH := c.size()
				if r := img.Bounds(); r.Dx() != wantW || r.Dy() != wantH {
					t.Fatalf("PNG() size = %dx%d, want %dx%d", r.Dx(), r.Dy(), wantW, wantH)
				}
				// Count non-background pixels in the middle of the plot area.
				r := img.Bounds()
				inked := 0
				for y := r.Dy() / 4; y < r.Dy()*3/4; y++ {
					for x := r.Dx() / 4; x < r.Dx()*3/4; x++ {
						if color.RGBAModel.Convert(img.At(x, y)) != white {
							inked++
						}
					}
				}
				if area := r.Dx() * r.Dy() / 4; inked < area/200 {
					t.Errorf("PNG() has %d non-white pixels of %d in the plot's middle; want at least %d", inked, area, area/200)
				}
			})
		}
	}
}

func TestSVGDeterministic(t *testing.T) {
	c := diffChart()
	var a, b bytes.Buffer
	if err := c.SVG(&a); err != nil {
		t.Fatal(err)
	}
	if err := c.SVG(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("SVG() gave different bytes for the same chart:\n%s", golden.Diff(a.String(), b.String()))
	}
}

func TestEscaping(t *testing.T) {
	evil := "<script>alert(1)</script> & \"q\" 'a'\x00\x1b[31m\xff"
	c := successChart()
	c.Title, c.XLabel, c.YLabel = evil, evil, evil
	c.X[0] = "<b>&amp;"
	c.Series[0].Name = "</text><script>"
	var buf bytes.Buffer
	if err := c.SVG(&buf); err != nil {
		t.Fatalf("SVG() = %v", err)
	}
	if err := wellFormed(buf.Bytes()); err != nil {
		t.Fatalf("SVG() with %q in the title is not well-formed XML: %v", evil, err)
	}
	if bytes.Contains(buf.Bytes(), []byte("<script")) {
		t.Errorf("SVG() contains an unescaped <script")
	}
	texts := strings.Join(xmlText(t, buf.Bytes()), "\n")
	for _, want := range []string{"<script>alert(1)</script> & \"q\" 'a'[31m\uFFFD", "<b>&amp;", "</text><script>"} {
		if !strings.Contains(texts, want) {
			t.Errorf("SVG() text elements = %q, want one holding %q", texts, want)
		}
	}
}

func TestSVGContent(t *testing.T) {
	var buf bytes.Buffer
	c := qpsChart()
	if err := c.SVG(&buf); err != nil {
		t.Fatal(err)
	}
	texts := xmlText(t, buf.Bytes())
	// Every category is labelled, both axes and the title are there.
	for _, want := range append(labels(classicLevels), title, "Requests/sec", "avg latency (ms)", "QPS", "TTLB avg (ms)", "concurrency") {
		found := false
		for _, s := range texts {
			found = found || s == want
		}
		if !found {
			t.Errorf("SVG() texts = %q, want one equal to %q", texts, want)
		}
	}
}

// TestConcurrentRendering renders charts from several goroutines, as a report
// writer may, and checks the output matches a sequential render (run with -race).
func TestConcurrentRendering(t *testing.T) {
	want := make([][]byte, len(goldens))
	for i, g := range goldens {
		var buf bytes.Buffer
		if err := g.chart.SVG(&buf); err != nil {
			t.Fatal(err)
		}
		want[i] = buf.Bytes()
	}
	got := make([][]byte, len(goldens))
	errs := make([]error, len(goldens))
	var wg sync.WaitGroup
	for i, g := range goldens {
		wg.Go(func() {
			var buf bytes.Buffer
			errs[i] = g.chart.SVG(&buf)
			got[i] = buf.Bytes()
		})
	}
	wg.Wait()
	for i, g := range goldens {
		if errs[i] != nil || !bytes.Equal(got[i], want[i]) {
			t.Errorf("concurrent SVG() of %s = %v, identical=%v; want nil and identical bytes", g.name, errs[i], bytes.Equal(got[i], want[i]))
		}
	}
}
