package sweep

import (
	"math"
	"strings"
	"testing"
)

// simulate runs the search against a target whose true capacity is ceiling.
func simulate(s Search, ceiling float64) (answer float64, probes []Decision) {
	for {
		rate, done := s.Next(probes)
		if done {
			pass, _ := Bracket(probes)
			return pass, probes
		}
		probes = append(probes, Decision{Rate: rate, Met: rate <= ceiling})
	}
}

func TestSearchFindsTheCeiling(t *testing.T) {
	cases := []struct {
		name    string
		search  Search
		ceiling float64
	}{
		{"ceiling above the start", Search{}, 1234},
		{"ceiling below the start: shrink first", Search{Start: 1000}, 37},
		{"ceiling exactly on a probe", Search{Start: 100}, 800},
		{"fine precision", Search{Precision: 0.01}, 5555},
		{"fractional rates", Search{Start: 1}, 2.5},
	}
	for _, c := range cases {
		s := c.search.WithDefaults()
		if err := s.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, probes := simulate(s, c.ceiling)
		if got > c.ceiling || got < c.ceiling*(1-s.Precision)-1e-9 {
			t.Errorf("%s: answer %g after %d probes %v, want within %g%% below %g", c.name, got, len(probes), probes, s.Precision*100, c.ceiling)
		}
		if len(probes) > 15 {
			t.Errorf("%s: %d probes, want a logarithmic number", c.name, len(probes))
		}
	}
}

func TestSearchStops(t *testing.T) {
	cases := []struct {
		name   string
		search Search
		probes []Decision
		want   bool // done
	}{
		{"first probe", Search{}.WithDefaults(), nil, false},
		{"max reached and passing", Search{Max: 400}.WithDefaults(), []Decision{{400, true}}, true},
		{"nothing passes down to the floor", Search{}.WithDefaults(), []Decision{{0.15, false}}, true},
		{"bracket within precision", Search{}.WithDefaults(), []Decision{{100, true}, {104, false}}, true},
		{"bracket too wide", Search{}.WithDefaults(), []Decision{{100, true}, {200, false}}, false},
		{"probe budget spent", Search{MaxProbes: 2}.WithDefaults(), []Decision{{100, true}, {200, true}}, true},
	}
	for _, c := range cases {
		if _, done := c.search.Next(c.probes); done != c.want {
			t.Errorf("%s: done = %v, want %v", c.name, done, c.want)
		}
	}
}

func TestBracketIgnoresFailuresBelowAPass(t *testing.T) {
	// A noisy failure below a pass does not shrink the bracket: the highest pass counts.
	pass, fail := Bracket([]Decision{{100, true}, {150, false}, {200, true}, {400, false}})
	if pass != 200 || fail != 400 {
		t.Errorf("Bracket = %g, %g; want 200, 400", pass, fail)
	}
	if _, fail := Bracket([]Decision{{100, true}}); !math.IsInf(fail, 1) {
		t.Errorf("no failure: fail = %g, want +Inf", fail)
	}
}

func TestSearchValidate(t *testing.T) {
	err := Search{Start: -1, Factor: 1, Precision: 2, MaxProbes: 1}.Validate()
	if err == nil {
		t.Fatal("Validate() = nil for a search with every field wrong")
	}
	for _, want := range []string{"start", "factor", "precision", "probes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %q, want it to mention %s", err, want)
		}
	}
}
