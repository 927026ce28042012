package chart

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"io"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/apiperf/apiperf/outfile"
)

// dpi maps pixels to points: at 96 dots per inch a 960 px wide PNG is 720 pt,
// and an SVG of 720 pt is shown 960 px wide by browsers.
const dpi = 96

// svgFonts is the font-family of SVG text.
const svgFonts = "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"

// pt converts pixels to a length.
func pt(px int) vg.Length { return vg.Length(px) * vg.Inch / dpi }

// SVG validates the chart and writes it as an SVG document. The same chart
// always gives the same bytes.
func (c Chart) SVG(w io.Writer) error {
	if err := c.Validate(); err != nil {
		return err
	}
	wpx, hpx := c.size()
	cv := vgsvg.New(pt(wpx), pt(hpx))
	if err := render(c, cv); err != nil {
		return err
	}
	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return fmt.Errorf("writing svg: %w", err)
	}
	// Liberation Sans is metric compatible with Arial and Helvetica: name them
	// as fallbacks so viewers without it keep the layout.
	doc := bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"), []byte(svgFonts))
	if _, err := w.Write(doc); err != nil {
		return fmt.Errorf("writing svg: %w", err)
	}
	return nil
}

// PNG validates the chart and writes it as a PNG image of Width x Height pixels.
func (c Chart) PNG(w io.Writer) error {
	if err := c.Validate(); err != nil {
		return err
	}
	wpx, hpx := c.size()
	img := image.NewRGBA(image.Rect(0, 0, wpx, hpx))
	cv := vgimg.NewWith(vgimg.UseImage(img), vgimg.UseDPI(dpi))
	if err := render(c, cv); err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: cv}).WriteTo(w); err != nil {
		return fmt.Errorf("writing png: %w", err)
	}
	return nil
}

// render draws c on cv, turning a panic of the drawing library into an error.
func render(c Chart, cv vg.CanvasSizer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("drawing chart %q: %v", c.Title, r)
		}
	}()
	c.draw(draw.New(cv))
	return nil
}

// WriteFiles writes the chart to base+".svg" and base+".png".
func (c Chart) WriteFiles(base string) error {
	if err := c.Validate(); err != nil {
		return err
	}
	return errors.Join(
		writeFile(base+".svg", c.SVG),
		writeFile(base+".png", c.PNG),
	)
}

// writeFile writes name with fn, whole or not at all.
func writeFile(name string, fn func(io.Writer) error) error {
	if err := outfile.WriteWith(name, fn); err != nil {
		return fmt.Errorf("writing chart: %w", err)
	}
	return nil
}
