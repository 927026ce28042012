package profcap

import (
	"math"
	"strings"
	"testing"
)

func TestParseExposition(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    sampleSet
		wantErr string
	}{
		{
			// the ordinary client_golang output: comments, a summary with quantiles.
			name: "go collector page",
			in: `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 42
# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0"} 1.5e-05
go_gc_duration_seconds{quantile="1"} 0.0003
go_gc_duration_seconds_sum 0.0012
go_gc_duration_seconds_count 7
`,
			want: sampleSet{"go_goroutines": 42, "go_gc_duration_seconds_sum": 0.0012, "go_gc_duration_seconds_count": 7},
		},
		{
			// an unlabelled sample wins over an earlier labelled one; timestamps are skipped.
			name: "unlabelled wins and timestamps",
			in:   "up{job=\"a\"} 0\nup 1 1712345678000\n\tup{job=\"b\"} 0\n",
			want: sampleSet{"up": 1},
		},
		{
			// label values may hold escapes, braces, commas and '#'; trailing comma is legal.
			name: "tricky labels",
			in:   `m{path="/a,b}#",q="say \"hi\"\n\\",} +Inf` + "\n",
			want: sampleSet{"m": math.Inf(1)},
		},
		{
			// quoted UTF-8 metric names (UTF-8 validation scheme).
			name: "quoted name",
			in:   "{\"my.metric\",le=\"1\"} 3\n",
			want: sampleSet{"my.metric": 3},
		},
		{
			// a histogram keeps its _sum and _count, not a bucket.
			name: "histogram",
			in:   "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 3\nh_sum 1.5\nh_count 3\n",
			want: sampleSet{"h_sum": 1.5, "h_count": 3},
		},
		{
			// an HTML page is garbage, reported with its line.
			name:    "html",
			in:      "<!DOCTYPE html>\n<html>",
			wantErr: "line 1: invalid metric name",
		},
		{
			// a value that is not a number.
			name:    "bad value",
			in:      "# ok\ngo_goroutines many\n",
			wantErr: "line 2: expected float as value",
		},
		{
			// Go-only float syntax is not Prometheus syntax.
			name:    "hex value",
			in:      "m 0x1p-2\n",
			wantErr: "expected float as value",
		},
		{
			// an unterminated label value.
			name:    "unterminated",
			in:      "m{a=\"b} 1\n",
			wantErr: "line 1: label value",
		},
		{
			// a page of only comments has no samples.
			name:    "empty",
			in:      "# HELP x y\n\n",
			wantErr: "no metric samples",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseExposition(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseExposition error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseExposition: %v", err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("parseExposition = %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("parseExposition[%q] = %v, want %v", k, got[k], v)
				}
			}
		})
	}
}

func FuzzParseExposition(f *testing.F) {
	f.Add("go_goroutines 42\n")
	f.Add("# TYPE x summary\nx{quantile=\"0.5\"} 1\nx_sum 2 123\n")
	f.Add("{\"a.b\",c=\"d\\\"\"} NaN # {e=\"f\"} 1\n")
	f.Add("<html><body>nope</body></html>")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := parseExposition(strings.NewReader(in))
		if err != nil {
			return
		}
		if len(got) == 0 {
			t.Fatalf("parseExposition(%q) succeeded with no samples", in)
		}
		for name := range got {
			if name == "" {
				t.Fatalf("parseExposition(%q) returned an empty metric name", in)
			}
			base := strings.TrimSuffix(strings.TrimSuffix(name, "_sum"), "_count")
			if !strings.Contains(in, base) && !strings.Contains(in, `"`) {
				t.Fatalf("parseExposition(%q) invented metric %q", in, name)
			}
		}
	})
}
