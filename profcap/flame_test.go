package profcap

import (
	"bytes"
	"encoding/xml"
	"io"
	"testing"

	"github.com/apiperf/apiperf/internal/golden"
)

// fixedFlame is a small tree with names that must be escaped.
func fixedFlame() FlameGraph {
	return FlameGraph{
		SampleType: "cpu",
		Unit:       "nanoseconds",
		Root: &Frame{Name: "root", Value: 1_000_000_000, Children: []*Frame{
			{Name: "main.serve", Value: 900_000_000, Children: []*Frame{
				{Name: "main.(*logMiddleware).ServeHTTP", Value: 400_000_000, Children: []*Frame{
					{Name: "fmt.Sprintf", Value: 350_000_000},
				}},
				{Name: "<script>alert('x&y')</script>", Value: 300_000_000},
				{Name: "main.tiny", Value: 100_000}, // narrower than svgMinWidth: not drawn
			}},
			{Name: `runtime.gcBgMarkWorker "bg"`, Value: 100_000_000},
		}},
	}
}

func TestFlameSVGGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := fixedFlame().WriteSVG(&buf, "CPU <flame> & friends"); err != nil {
		t.Fatalf("WriteSVG: %v", err)
	}
	got := buf.Bytes()
	golden.Check(t, "flame.golden.svg", got)

	if bytes.Contains(got, []byte("<script")) {
		t.Errorf("WriteSVG output contains an unescaped <script")
	}
	if !bytes.Contains(got, []byte("<title>&lt;script&gt;alert(&#39;x&amp;y&#39;)&lt;/script&gt; (300ms, 30.00%)</title>")) {
		t.Errorf("WriteSVG output lacks the escaped title of the <script> frame")
	}
	// The document must be well-formed XML with one <title> per drawn frame.
	dec := xml.NewDecoder(bytes.NewReader(got))
	titles := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("WriteSVG output is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "title" {
			titles++
		}
	}
	if titles != 6 {
		t.Errorf("WriteSVG drew %d frames with titles, want 6", titles)
	}
	if bytes.Contains(got, []byte("href")) || bytes.Count(got, []byte("://")) != 1 {
		t.Errorf("WriteSVG output references something outside itself")
	}
}

func TestFlameSVGDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	if err := fixedFlame().WriteSVG(&a, "t"); err != nil {
		t.Fatal(err)
	}
	if err := fixedFlame().WriteSVG(&b, "t"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("WriteSVG gave different output for the same graph")
	}
	if err := (FlameGraph{}).WriteSVG(&a, "t"); err == nil {
		t.Errorf("WriteSVG of a graph without root: got nil error, want one")
	}
}
