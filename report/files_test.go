package report

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/internal/golden"
	"github.com/apiperf/apiperf/report/chart"
)

func TestWriteAllFiles(t *testing.T) {
	dir := t.TempDir()
	paths, err := WriteAll(dir, synthSweep())
	if err != nil {
		t.Fatalf("WriteAll: %v", err)
	}
	var got []string
	for _, p := range paths {
		got = append(got, filepath.Base(p))
	}
	sort.Strings(got)
	want := []string{"bench.txt", "demo.dat", "demo_latency.png", "demo_latency.svg", "demo_qps_ttlb.png", "demo_qps_ttlb.svg",
		"demo_successrate.png", "demo_successrate.svg", "report.html"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("WriteAll wrote %v, want %v", got, want)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			t.Fatalf("reading %s: %v (%d bytes)", p, err, len(b))
		}
		if strings.HasSuffix(p, ".png") {
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("decoding %s: %v", p, err)
			}
			if s := img.Bounds().Size(); s.X != chart.DefaultWidth || s.Y != chart.DefaultHeight {
				t.Errorf("%s is %v, want %dx%d", p, s, chart.DefaultWidth, chart.DefaultHeight)
			}
		}
	}
	golden.Check(t, "demo.dat", mustRead(t, filepath.Join(dir, "demo.dat")))
	for _, c := range []string{"qps_ttlb", "successrate", "latency"} {
		golden.Check(t, "demo_"+c+".svg", mustRead(t, filepath.Join(dir, "demo_"+c+".svg")))
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
