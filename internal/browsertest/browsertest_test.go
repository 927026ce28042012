package browsertest

import (
	"image"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenSeesProblems proves the recorder catches what the report tests assert against: a
// console error, an uncaught exception and a request outside file:// (to loopback only).
func TestOpenSeesProblems(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.html")
	page := `<!DOCTYPE html><html><body><p id="x">hello</p>
<img src="http://127.0.0.1:9/x.png">
<script>console.error("boom"); throw new Error("thrown");</script></body></html>`
	if err := os.WriteFile(p, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	pg := Open(t, p)
	errs := strings.Join(pg.ConsoleErrors(), "\n")
	for _, want := range []string{"boom", "thrown"} {
		if !strings.Contains(errs, want) {
			t.Errorf("ConsoleErrors() = %q, want one mentioning %q", errs, want)
		}
	}
	if ext := pg.ExternalRequests(); len(ext) != 1 || ext[0] != "http://127.0.0.1:9/x.png" {
		t.Errorf("ExternalRequests() = %q, want the loopback image", ext)
	}
	if got := pg.Text(t, "#x"); got != "hello" {
		t.Errorf("Text(#x) = %q, want hello", got)
	}
}

func TestInk(t *testing.T) {
	blank := image.NewRGBA(image.Rect(0, 0, 10, 10))
	for i := range blank.Pix {
		blank.Pix[i] = 0xff
	}
	drawn := image.NewRGBA(image.Rect(0, 0, 10, 10))
	copy(drawn.Pix, blank.Pix)
	for x := range 10 {
		drawn.Set(x, 5, color.RGBA{0, 0x72, 0xb2, 0xff})
		drawn.Set(x, 6, color.RGBA{0xd5, 0x5e, 0, 0xff})
	}
	tests := []struct {
		name    string
		img     image.Image
		share   float64
		colours int
	}{
		{"all white is blank", blank, 0, 0},         // nothing drawn
		{"two lines of two colours", drawn, 0.2, 2}, // 20 of 100 pixels inked
	}
	for _, tt := range tests {
		share, colours := Ink(tt.img)
		if share != tt.share || colours != tt.colours {
			t.Errorf("%s: Ink = %v, %d; want %v, %d", tt.name, share, colours, tt.share, tt.colours)
		}
	}
}
