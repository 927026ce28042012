package measure

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestGeneratorLimitJSONRoundTrip(t *testing.T) {
	s := &Step{Label: "c=1500", Concurrency: 1500, Latency: NewHistogram(), AllAttempts: NewHistogram(),
		GeneratorLimit: &GeneratorLimit{Errno: "EADDRNOTAVAIL", Resource: "local ports", Connections: 1000, Wanted: 1500, Fix: "add source addresses with --source"}}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Step
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("Unmarshal(%s): %v", b, err)
	}
	if back.GeneratorLimit == nil || *back.GeneratorLimit != *s.GeneratorLimit {
		t.Errorf("round trip: got %+v, want %+v", back.GeneratorLimit, s.GeneratorLimit)
	}
	// A run.json written before the field existed reads as not limited.
	var old Step
	if err := json.Unmarshal([]byte(`{"label":"c=10","concurrency":10,"attempts":5}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.GeneratorLimit != nil {
		t.Errorf("old step: GeneratorLimit = %+v, want nil", old.GeneratorLimit)
	}
	if b, _ := json.Marshal(&old); strings.Contains(string(b), "generator_limit") {
		t.Errorf("a step without a limit writes %s; want no generator_limit key", b)
	}
}

func TestGeneratorLimitString(t *testing.T) {
	g := &GeneratorLimit{Errno: "EMFILE", Resource: "open files", Connections: 90, Wanted: 200, Fix: "raise `ulimit -n`"}
	want := "generator limit: open files exhausted (EMFILE) at 90 of 200 connections; not the target's failure; fix: raise `ulimit -n`"
	if got := g.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := (*GeneratorLimit)(nil).String(); got != "" {
		t.Errorf("nil String() = %q, want empty", got)
	}
}

func TestGeneratorLimitMerge(t *testing.T) {
	lim := &GeneratorLimit{Errno: "EADDRNOTAVAIL", Resource: "local ports", Connections: 1000, Wanted: 1500, Fix: "f"}
	a := &Step{Concurrency: 1500, GeneratorLimit: lim}
	b := &Step{Concurrency: 1500} // the other worker opened all it asked for
	a.Merge(b)
	if g := a.GeneratorLimit; g == nil || g.Connections != 2500 || g.Wanted != 3000 || g.Errno != "EADDRNOTAVAIL" {
		t.Errorf("merged limit %+v; want 2500 of 3000 connections, EADDRNOTAVAIL", g)
	}
	c, d := &Step{Concurrency: 10}, &Step{Concurrency: 10}
	c.Merge(d)
	if c.GeneratorLimit != nil {
		t.Errorf("merging unlimited steps made a limit %+v", c.GeneratorLimit)
	}
}

func TestGeneratorBound(t *testing.T) {
	sec := func(f float64) Duration { return Duration(time.Duration(f * float64(time.Second))) }
	for _, tc := range []struct {
		name string
		g    *Generator
		want bool
	}{
		{"unknown", nil, false},
		{"no cores known", &Generator{CPU: sec(2), Wall: sec(1)}, false},
		{"at its cores: 1.8 of 2", &Generator{CPU: sec(1.8), Wall: sec(1), Cores: 2}, true},
		{"idle, short waits of a mostly idle process do not count", &Generator{CPU: sec(0.2), RunWait: sec(2), Wall: sec(1), Cores: 2}, false},
		{"used 0.6 and waited 1.2: wanted 1.8 of 2", &Generator{CPU: sec(0.6), RunWait: sec(1.2), Wall: sec(1), Cores: 2}, true},
		{"used 1.0, waited 0.2: room left", &Generator{CPU: sec(1), RunWait: sec(0.2), Wall: sec(1), Cores: 2}, false},
	} {
		if got := tc.g.Bound(); got != tc.want {
			t.Errorf("%s: Bound() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
