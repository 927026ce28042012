package servertiming

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// show renders metrics as "name=dur(desc)" for comparisons.
func show(ms []Metric) string {
	var parts []string
	for _, m := range ms {
		s := string(m.Name)
		if m.HasDur {
			s += fmt.Sprintf("=%g", m.Dur)
		}
		if m.Desc != nil {
			s += "(" + string(m.Desc) + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in        string
		want      string
		malformed int
	}{
		{"", "", 0},             // nothing
		{"db;dur=2", "db=2", 0}, // the common form
		{"db;dur=2.5;desc=\"Database\"", "db=2.5(Database)", 0},                     // quoted desc
		{"cache;desc=hit, db;dur=53, app;dur=47.2", "cache(hit) db=53 app=47.2", 0}, // several metrics, token desc
		{"  db ; dur = 2 ;desc=x ,app;dur=1", "db=2(x) app=1", 0},                   // optional whitespace everywhere
		{"db;DUR=3;Desc=y", "db=3(y)", 0},                                           // parameter names are case-insensitive
		{"db;dur=1;dur=9", "db=1", 0},                                               // the first dur wins
		{"miss", "miss", 0},                                                         // a metric without parameters
		{"db;dur=\"4\"", "db=4", 0},                                                 // dur as a quoted string
		{"a;desc=\"x, y\", b;dur=1", "a(x, y) b=1", 0},                              // a comma inside a quoted string
		{"a;desc=\"say \\\"hi\\\"\";dur=2", `a=2(say \"hi\")`, 0},                   // quoted pairs stay escaped
		{",,db;dur=1,,", "db=1", 0},                                                 // empty list elements
		{"db;dur=1e3", "db=1000", 0},                                                // an exponent
		{"db;dur=.5", "db=0.5", 0},                                                  // no leading digit
		{"db;dur=abc, app;dur=3", "app=3", 1},                                       // a bad dur is skipped, the rest kept
		{"db;dur=-1", "", 1},                                                        // a negative dur
		{"db;dur=", "", 1},                                                          // an empty dur
		{"db;dur", "", 1},                                                           // dur without a value
		{";dur=1, ok;dur=2", "ok=2", 1},                                             // no name
		{"d b;dur=1, ok;dur=2", "ok=2", 1},                                          // a space inside a name
		{"db;desc=\"open, ok;dur=2", "", 1},                                         // an unterminated quote swallows the rest
		{"db;dur=1;=x, ok", "ok", 1},                                                // a parameter without a name
		{"db;dur=1x", "", 1},                                                        // trailing garbage in dur
		{"é;dur=1, ok;dur=2", "ok=2", 1},                                            // a non-token byte
		{"db;dur=1e999", "", 1},                                                     // out of range
	} {
		got, bad := Parse([]byte(tc.in))
		if show(got) != tc.want || bad != tc.malformed {
			t.Errorf("Parse(%q) = %q, %d malformed; want %q, %d", tc.in, show(got), bad, tc.want, tc.malformed)
		}
	}
}

func TestNextAllocs(t *testing.T) {
	v := []byte(`cache;desc="hit", db;dur=53.5, app;dur=47.2;desc=render`)
	n := testing.AllocsPerRun(100, func() {
		rest := v
		for {
			_, r, ok, _ := Next(rest)
			if !ok {
				return
			}
			rest = r
		}
	})
	if n != 0 {
		t.Fatalf("Next allocated %v times per header, want 0", n)
	}
}

// FuzzParse checks that no value makes Parse panic or loop, that every metric it returns
// has a token name and a non-negative dur, and that re-serialized metrics parse back the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"db;dur=2", `a;desc="x, y", b;dur=1.5`, ";;,,", `x;desc="\"`, "db;dur=1e3;desc=q"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		ms, bad := Parse(v)
		if bad < 0 || len(ms)+bad > len(v) {
			t.Fatalf("Parse(%q): %d metrics and %d malformed from %d bytes", v, len(ms), bad, len(v))
		}
		var b bytes.Buffer
		for i, m := range ms {
			if len(m.Name) == 0 || m.Dur < 0 {
				t.Fatalf("Parse(%q) returned metric %q dur %v", v, m.Name, m.Dur)
			}
			for _, c := range m.Name {
				if !isTokenChar(c) {
					t.Fatalf("Parse(%q) returned name %q with a non-token byte", v, m.Name)
				}
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.Write(m.Name)
			if m.HasDur {
				fmt.Fprintf(&b, ";dur=%v", m.Dur)
			}
		}
		again, bad2 := Parse(b.Bytes())
		if bad2 != 0 || len(again) != len(ms) {
			t.Fatalf("Parse(%q) re-serialized as %q parses to %d metrics, %d malformed; want %d, 0", v, b.Bytes(), len(again), bad2, len(ms))
		}
		for i := range ms {
			if !bytes.Equal(again[i].Name, ms[i].Name) || again[i].HasDur != ms[i].HasDur || (ms[i].HasDur && again[i].Dur != ms[i].Dur) {
				t.Fatalf("Parse(%q): metric %d %q dur %v came back as %q dur %v", v, i, ms[i].Name, ms[i].Dur, again[i].Name, again[i].Dur)
			}
		}
	})
}
