package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/sweep"
)

func TestReadDat(t *testing.T) {
	tests := []struct {
		name, in string
		want     []row  // nil: an error is wanted
		err      string // the error, with its position
	}{
		// the classic script's own output: awk's %.6g latencies, two-decimal success
		{"classic", "200 41234.56 4.85 100.00\n500 43000.10 11.62 99.98\n", []row{{200, 41234.56, 4.85, 100}, {500, 43000.10, 11.62, 99.98}}, ""},
		// comments, blank lines, tabs and CRLF are fine
		{"comments", "# c qps lat succ\n\n200\t1.5\t0.5\t100\r\n", []row{{200, 1.5, 0.5, 100}}, ""},
		// awk printed an empty latency (wrk said "1.2m"): three fields, latency unknown
		{"no latency", "200 10.00  100.00\n", []row{{200, 10, math.NaN(), 100}}, ""},
		// zero requests: mawk divides by zero and prints -nan
		{"nan success", "200 0.00 0 -nan\n", []row{{200, 0, 0, math.NaN()}}, ""},
		// a row with five fields is not the classic format
		{"extra field", "200 1 2 3\n500 1 2 3 4\n", nil, "x.dat:2: want 4 fields"},
		// a word where the qps goes
		{"bad qps", "200 fast 1 100\n", nil, `x.dat:1: qps "fast"`},
		// a success rate above 100 is not a percentage
		{"bad success", "200 1 1 101\n", nil, `x.dat:1: success_pct "101"`},
		// a level given twice would make the join ambiguous
		{"duplicate", "200 1 1 100\n\n200 2 1 100\n", nil, "x.dat:3: concurrency 200 already on line 1"},
		// a negative or missing concurrency
		{"bad concurrency", "-5 1 1 100\n", nil, `x.dat:1: concurrency "-5"`},
		// nothing but comments
		{"empty", "# nothing\n", nil, "x.dat:1: no data lines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadDat("x.dat", strings.NewReader(tt.in))
			if tt.want == nil {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ReadDat(%q) error = %v, want one containing %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ReadDat(%q): %v", tt.in, err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("ReadDat(%q) = %v, want %v", tt.in, got, tt.want)
			}
			for i := range got {
				if !sameRow(got[i], tt.want[i]) {
					t.Errorf("row %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// row is a .dat line: concurrency qps avg_latency_ms success_pct (NaN: unknown).
type row [4]float64

func (r row) level() sweep.Level {
	mean := measure.Duration(-1)
	if !math.IsNaN(r[2]) {
		mean = measure.Duration(r[2] * float64(time.Millisecond))
	}
	return sweep.Level{Label: sweep.Label(false, r[0]), Value: r[0], Reps: 1, QPS: r[1], Mean: mean, Classic: r[3], Partial: true}
}

func sameRow(a sweep.Level, b row) bool {
	eq := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 || math.IsNaN(x) && math.IsNaN(y) }
	return eq(a.Value, b[0]) && eq(a.QPS, b[1]) && eq(a.MeanMillis(), b[2]) && eq(a.Classic, b[3]) && a.Partial && a.Label == sweep.Label(false, b[0])
}

// TestDatRoundTrip proves WriteDat's output reads back as the same levels.
func TestDatRoundTrip(t *testing.T) {
	side := DatSide("x", []sweep.Level{row{200, 1234.5, 4.25, 99.5}.level(), row{10, 99, math.NaN(), 100}.level()})
	var b bytes.Buffer
	if err := WriteDat(&b, side.Levels); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadDat("x.dat", &b)
	if err != nil {
		t.Fatalf("ReadDat of WriteDat's output %q: %v", b.String(), err)
	}
	want := []row{{10, 99, math.NaN(), 100}, {200, 1234.5, 4.25, 99.5}}
	for i := range want {
		if !sameRow(rows[i], want[i]) {
			t.Errorf("row %d = %+v, want %+v", i, rows[i], want[i])
		}
	}
}

func FuzzReadDat(f *testing.F) {
	f.Add("200 41234.56 4.85 100.00\n500 1 2 3\n")
	f.Add("# c\n\n200 10.00  100.00\n")
	f.Add("200 0 0 -nan\n")
	f.Add("1e3 NaN inf 50\n")
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := ReadDat("fuzz.dat", strings.NewReader(in))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.dat:") {
				t.Fatalf("error %q has no file:line position", err)
			}
			return
		}
		seen := map[float64]bool{}
		for _, r := range rows {
			if !(r.Value > 0) || math.IsInf(r.Value, 0) || seen[r.Value] || !(r.QPS >= 0) || math.IsInf(r.QPS, 0) {
				t.Fatalf("ReadDat(%q) accepted a bad row %+v", in, r)
			}
			seen[r.Value] = true
			if r.Classic < 0 || r.Classic > 100 {
				t.Fatalf("ReadDat(%q) accepted success %v", in, r.Classic)
			}
		}
	})
}
