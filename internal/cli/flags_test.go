package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestParseCount(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "400", want: 400},
		{in: "10k", want: 10000},  // wrk's suffixes are x1000
		{in: "1M", want: 1000000}, // upper case
		{in: "1.5k", want: 1500},  // a fraction that comes out whole
		{in: "2G", want: 2000000000},
		{in: "1.5", bad: true},  // not a whole number
		{in: "-3", bad: true},   // negative
		{in: "k", bad: true},    // a suffix alone
		{in: "ten", bad: true},  // words
		{in: "NaN", bad: true},  // not a number
		{in: "1e30", bad: true}, // too large
	}
	for _, c := range cases {
		got, err := parseCount(c.in)
		if (err != nil) != c.bad || (!c.bad && got != c.want) {
			t.Errorf("parseCount(%q) = %d, %v; want %d, bad=%v", c.in, got, err, c.want, c.bad)
		}
	}
}

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{in: "10", want: 10 * time.Second}, // a bare number is seconds, as in wrk
		{in: "30s", want: 30 * time.Second},
		{in: "2m", want: 2 * time.Minute},
		{in: "500ms", want: 500 * time.Millisecond}, // more than wrk accepts
		{in: "1.5s", want: 1500 * time.Millisecond},
		{in: "1h", want: time.Hour},
		{in: "-1s", bad: true},
		{in: "soon", bad: true},
		{in: "", bad: true},
	}
	for _, c := range cases {
		got, err := parseDuration(c.in)
		if (err != nil) != c.bad || (!c.bad && got != c.want) {
			t.Errorf("parseDuration(%q) = %v, %v; want %v, bad=%v", c.in, got, err, c.want, c.bad)
		}
	}
}

func TestParseExpect(t *testing.T) {
	s, err := parseExpect("200-204,304")
	if err != nil {
		t.Fatal(err)
	}
	for code, want := range map[int]bool{200: true, 204: true, 205: false, 304: true, 301: false} {
		if s.Has(code) != want {
			t.Errorf("--expect 200-204,304: Has(%d) = %v", code, !want)
		}
	}
	for _, bad := range []string{"", "abc", "300-200", "99", "200-"} {
		if _, err := parseExpect(bad); err == nil {
			t.Errorf("parseExpect(%q) = nil error", bad)
		}
	}
}

// TestWrkCommandLine checks that wrk's habits parse: values glued to short flags and flags
// after the URL.
func TestWrkCommandLine(t *testing.T) {
	fs := newFlagSet("run", &env{stderr: &bytes.Buffer{}})
	var lf loadFlags
	lf.register(fs)
	if err := parseFlags(fs, strings.Fields("-t2 -c400 -d30s http://127.0.0.1:8080/ -T5s -H X-A:\\ b")); err != nil {
		t.Fatal(err)
	}
	if lf.threads != 2 || lf.connections != 400 || lf.duration != 30*time.Second || lf.timeout != 5*time.Second || fs.Arg(0) != "http://127.0.0.1:8080/" {
		t.Errorf("parsed threads %d connections %d duration %v timeout %v url %q", lf.threads, lf.connections, lf.duration, lf.timeout, fs.Arg(0))
	}
}

func TestRunBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"run"},                                     // no URL
		{"run", "127.0.0.1:8080"},                   // no scheme
		{"run", "ftp://127.0.0.1/"},                 // unsupported scheme
		{"run", "http://127.0.0.1:99999/"},          // bad port
		{"run", "-c", "0", "http://127.0.0.1:1/"},   // no connections
		{"run", "-H", "bad", "http://127.0.0.1:1/"}, // malformed header
		{"run", "--body-file", "/nonexistent/body", "http://127.0.0.1:1/"},
		{"run", "-c", "1M", "-t", "1", "http://127.0.0.1:1/"}, // more connections than files
		{"run", "-d", "soon", "http://127.0.0.1:1/"},
		{"nosuchcommand"},
	} {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), args, &out, &errOut)
		if code != ExitUsage || strings.Count(errOut.String(), "\n") != 1 || !strings.HasPrefix(errOut.String(), "apiperf") {
			t.Errorf("apiperf %s: exit %d, stderr %q; want exit 2 and one line", strings.Join(args, " "), code, errOut.String())
		}
	}
}

func FuzzParseCount(f *testing.F) {
	for _, s := range []string{"10", "2.5k", "1M", "-1", "1e3k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseCount(s)
		if err == nil && n < 0 {
			t.Errorf("parseCount(%q) = %d, a negative count without error", s, n)
		}
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"10", "1.5s", "2m", "-1s", "1e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDuration(s)
		if err == nil && d < 0 {
			t.Errorf("parseDuration(%q) = %v, negative without error", s, d)
		}
	})
}

func FuzzParseExpect(f *testing.F) {
	f.Add("200-399")
	f.Add("200,201,204")
	f.Fuzz(func(t *testing.T, s string) {
		set, err := parseExpect(s)
		if err == nil && set == ([16]uint64{}) {
			t.Errorf("parseExpect(%q) accepted an empty set", s)
		}
	})
}

// A value a bool, int or float flag refuses is named with what the flag wants, in one line,
// without Go's strconv error ("strconv.ParseBool: parsing ...: invalid syntax").
func TestFlagValueErrorsPlain(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--latency=yes", "http://127.0.0.1:1/"}, `apiperf: --latency "yes": want true or false` + "\n"},
		{[]string{"run", "--profile-top", "many", "http://127.0.0.1:1/"}, `apiperf: --profile-top "many": want a whole number` + "\n"},
		{[]string{"gate", "--alpha", "five", "--baseline", "x"}, `apiperf: --alpha "five": want a number` + "\n"},
		{[]string{"gate", "--alpha", "1e999", "--baseline", "x"}, `apiperf: --alpha "1e999": out of range` + "\n"},
	} {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), tt.args, &out, &errOut)
		if code != ExitUsage || errOut.String() != tt.want {
			t.Errorf("apiperf %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tt.args, " "), code, errOut.String(), tt.want)
		}
	}
}
