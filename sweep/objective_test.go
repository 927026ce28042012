package sweep

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

func TestParseObjective(t *testing.T) {
	tests := []struct {
		in      string
		want    string // String() of the parsed objective
		wantErr string // substring of the error; "" for success
	}{
		// The default objective round-trips unchanged.
		{DefaultObjective, "p99<=500ms,success>=99.9%", ""},
		// Spaces, upper case and a missing % are accepted and normalised.
		{" P99 <= 0.5s , success>=99.9 ", "p99<=500ms,success>=99.9%", ""},
		// Every metric: percentiles, error rate, qps with a k suffix, microseconds as us.
		{"p50<=250us,p90<=20ms,p99.9<=1.5s,p99.99<=2s,errors<=0.1%,qps>=2.5k", "p50<=250µs,p90<=20ms,p99.9<=1.5s,p99.99<=2s,errors<=0.1%,qps>=2500", ""},
		// Seconds with a fraction print as written, not as the float sum of their parts (2.5300000000000002s).
		{"p99<=2.53s", "p99<=2.53s", ""},
		// A whole minute stays readable.
		{"p75<=1m", "p75<=60s", ""},
		// p95, mean and max, the aliases users write (k6's, vegeta's), one endpoint of a mix.
		{"p95<=300ms,avg<=100ms,max<=2s,error_rate<=1%,rps>=100", "p95<=300ms,mean<=100ms,max<=2s,errors<=1%,qps>=100", ""},
		{"p99[login]<=300ms,success[GET /users]>=99%,p99<=1s", "p99[login]<=300ms,success[GET /users]>=99%,p99<=1s", ""},
		{"p99[]<=1s", "", "empty endpoint name"},
		{"p99[a]<=1s,p99[a]<=2s", "", "p99[a] is bounded twice"},
		// Empty: no objective, every level meets it.
		{"", "", ""},
		// Unknown metric and percentile.
		{"p96<=1s", "", `unknown metric "p96"`},
		{"latency<=1s", "", `unknown metric "latency"`},
		// A bound in the wrong direction is refused with the right operator named.
		{"p99>=500ms", "", "p99 takes <="},
		{"success<=99%", "", "success takes >="},
		{"p99<500ms", "", "p99 takes <="},
		// A latency needs a unit; percentages and qps need numbers.
		{"p99<=500", "", `"500" is not a duration`},
		{"success>=lots", "", `"lots" is not a percentage`},
		{"qps>=fast", "", `"fast" is not a number`},
		// No operator at all.
		{"p99", "", "want a bound like"},
		// Out-of-range values and a metric given twice are reported by Validate.
		{"success>=120%", "", "success bound must be in (0, 100]%"},
		{"errors<=100%", "", "errors bound must be in [0, 100)%"},
		{"p99<=0s", "", "p99 bound must be positive"},
		{"qps>=0", "", "qps bound must be positive"},
		{"p99<=1s,p99<=2s", "", "p99 is bounded twice"},
		// Every syntax problem is reported at once.
		{"p96<=1s,success>=x", "", `unknown metric "p96"`},
	}
	for _, tt := range tests {
		o, err := ParseObjective(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseObjective(%q) = %v, %v; want error containing %q", tt.in, o, err, tt.wantErr)
			}
			continue
		}
		if err != nil || o.String() != tt.want {
			t.Errorf("ParseObjective(%q) = %q, %v; want %q", tt.in, o.String(), err, tt.want)
			continue
		}
		again, err := ParseObjective(o.String())
		if err != nil || again.String() != o.String() {
			t.Errorf("ParseObjective(%q) (round trip) = %q, %v; want %q", o.String(), again.String(), err, o.String())
		}
	}
}

func TestParseObjectiveReportsAll(t *testing.T) {
	_, err := ParseObjective("p96<=1s,success>=x")
	if err == nil || !strings.Contains(err.Error(), "p96") || !strings.Contains(err.Error(), `"x" is not a percentage`) {
		t.Errorf("ParseObjective with two bad terms = %v; want both reported", err)
	}
}

func TestObjectiveJSON(t *testing.T) {
	type doc struct {
		Objective Objective `json:"objective"`
	}
	o, err := ParseObjective("p99.9<=1.5s,errors<=0.1%")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(doc{o})
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]string
	if err := json.Unmarshal(b, &raw); err != nil || raw["objective"] != "p99.9<=1.5s,errors<=0.1%" {
		t.Errorf("json.Marshal = %s (%v); want the objective as its string", b, err)
	}
	var back doc
	if err := json.Unmarshal(b, &back); err != nil || back.Objective.String() != o.String() {
		t.Errorf("json.Unmarshal(%s) = %q, %v; want %q", b, back.Objective, err, o)
	}
	if err := json.Unmarshal([]byte(`{"objective":"p99>=1s"}`), &back); err == nil {
		t.Error("json.Unmarshal of a bad objective succeeded; want an error")
	}
}

func TestObjectiveMisses(t *testing.T) {
	ms := func(n int) measure.Duration { return measure.Duration(time.Duration(n) * time.Millisecond) }
	good := Level{Label: "c=10", QPS: 1000, Success: 100, P50: ms(1), P90: ms(2), P99: ms(5), P999: ms(9)}
	tests := []struct {
		obj  string
		p    Level
		want string // the misses joined with "; "
	}{
		// A healthy level meets the default objective.
		{DefaultObjective, good, ""},
		// p99 over the bound is named with the measured value.
		{DefaultObjective, Level{QPS: 10, Success: 100, P99: ms(812)}, "p99 812ms > 500ms"},
		// Exactly on the bound meets it.
		{DefaultObjective, Level{QPS: 10, Success: 99.9, P99: ms(500)}, ""},
		// A success rate just under the floor shows enough digits to see the difference.
		{DefaultObjective, Level{QPS: 10, Success: 99.8999, P99: ms(1)}, "success 99.8999% < 99.9%"},
		// Both misses are listed, latency first, as the objective orders them.
		{DefaultObjective, Level{QPS: 10, Success: 50, P99: ms(600)}, "p99 600ms > 500ms; success 50% < 99.9%"},
		// Error rate and qps bounds.
		{"errors<=0.1%,qps>=2k", Level{QPS: 1500, ErrorRate: 0.5}, "errors 0.5% > 0.1%; qps 1500 < 2000"},
		// The zero objective is always met.
		{"", Level{}, ""},
	}
	for _, tt := range tests {
		o, err := ParseObjective(tt.obj)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(o.Misses(tt.p), "; ")
		if got != tt.want || o.Met(tt.p) != (tt.want == "") {
			t.Errorf("%q.Misses(%+v) = %q (Met %v); want %q", tt.obj, tt.p, got, o.Met(tt.p), tt.want)
		}
	}
}

func FuzzParseObjective(f *testing.F) {
	for _, s := range []string{DefaultObjective, "p50<=1us,qps>=1k", "errors<=0%", "p99.99<=1h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseObjective(s)
		if err != nil {
			return
		}
		again, err := ParseObjective(o.String())
		if err != nil || again.String() != o.String() {
			t.Fatalf("ParseObjective(%q) -> %q does not round-trip: %q, %v", s, o, again, err)
		}
	})
}

func TestObjectiveCheck(t *testing.T) {
	o, err := ParseObjective("p99<=500ms,max<=1s,success>=99.9%,qps>=100,p99[login]<=50ms,success[search]>=99%")
	if err != nil {
		t.Fatal(err)
	}
	lvl := Level{Label: "c=10", Attempts: 1000, Responses: 1000, Successes: 999, Success: 99.9, QPS: 80,
		P99: measure.Duration(812 * time.Millisecond), Max: measure.Duration(900 * time.Millisecond),
		Endpoints: []Level{{Label: "login", Responses: 500, P99: measure.Duration(40 * time.Millisecond)}}}
	var got []string
	for _, r := range o.Check(lvl) {
		got = append(got, fmt.Sprintf("%s %s pass=%v %s", r.Term, r.Measured, r.Pass, r.Reason))
	}
	want := []string{
		"p99<=500ms 812ms pass=false p99 812ms > 500ms (+312ms)",
		"max<=1s 900ms pass=true ",
		"success>=99.9% 99.9% pass=true ",
		"qps>=100 80 req/s pass=false qps 80 < 100 (-20.0%)",
		"p99[login]<=50ms 40ms pass=true ",
		`success[search]>=99%  pass=false success[search]: no endpoint "search" in this level`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Check:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// No data, and the generator's own ceiling, fail every term with the reason: never a pass.
	for _, l := range []Level{
		{Label: "c=10", Attempts: 50, Success: 0},
		{Label: "c=10", Attempts: 1000, Responses: 1000, Success: 100, QPS: 500, GeneratorBound: true},
		{Label: "c=10", Attempts: 1000, Responses: 1000, Success: 100, QPS: 500, GeneratorLimit: &measure.GeneratorLimit{Errno: "EADDRNOTAVAIL", Resource: "local ports"}},
	} {
		easy, _ := ParseObjective("p99<=1h,errors<=99%")
		for _, r := range easy.Check(l) {
			if r.Pass || r.Reason == "" {
				t.Errorf("Check of %+v: %+v; want a failure with its reason", l, r)
			}
		}
	}
	rep := o.CheckLevels([]Level{lvl, lvl})
	if n := len(rep.Failed()); n != 6 {
		t.Errorf("CheckLevels of two levels: %d failed; want 6 (three terms at each)", n)
	}
}

// A bad objective's error quotes each thing once: a single term is the whole objective, so
// its error is the term's; several terms keep the objective ahead of the bad term.
func TestParseObjectiveQuotesOnce(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"p99<=abc", `"p99<=abc": "abc" is not a duration like 500ms`},
		{"p99<300ms", `"p99<300ms": p99 takes <=`},
		{"p99<=1ms,p99<=x", `objective "p99<=1ms,p99<=x": "p99<=x": "x" is not a duration like 500ms`},
		{"success>=200%", `objective "success>=200%": success bound must be in (0, 100]%, got 200%`},
	} {
		if _, err := ParseObjective(tt.in); err == nil || err.Error() != tt.want {
			t.Errorf("ParseObjective(%q) = %v; want %q", tt.in, err, tt.want)
		}
	}
}
