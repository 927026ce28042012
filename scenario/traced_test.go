package scenario

import (
	"strings"
	"testing"
	"time"
)

// watching is a requester that watches responses and delays, as a script's may.
type watching struct{ Static }

func (watching) Response(int, []byte, []byte) Stop { return Continue }
func (watching) Delay() time.Duration              { return time.Millisecond }

type watchingSource struct{ r *watching }

func (s watchingSource) Requester(int, int) (Requester, error) { return s.r, nil }
func (watchingSource) Endpoints() []string                     { return nil }

// TestTraced: a traced requester stamps each request, tells its trace id and the bytes it
// was given, and keeps the inner requester's response() and delay().
func TestTraced(t *testing.T) {
	st, err := NewStatic(Scenario{URL: "http://127.0.0.1:1/x"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Traced(watchingSource{&watching{*st}}).Requester(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.(ResponseWatcher); !ok {
		t.Error("the traced requester lost the inner one's response()")
	}
	if _, ok := r.(Delayer); !ok {
		t.Error("the traced requester lost the inner one's delay()")
	}
	tr, ok := r.(Tracer)
	if !ok {
		t.Fatal("the traced requester is no Tracer")
	}
	raw, n, _, _ := r.Request()
	id := tr.Trace(0).String()
	if n != 1 || !strings.Contains(string(raw), "\r\ntraceparent: 00-"+id+"-") || string(tr.Value(0)[3:35]) != id {
		t.Errorf("request %q, trace id %s, value %q: want the header with the id", raw, id, tr.Value(0))
	}
	if string(tr.Unstamped()) != string(st.Bytes()) {
		t.Errorf("Unstamped() = %q, want the inner request %q", tr.Unstamped(), st.Bytes())
	}
	if _, ok := must(Traced(st).Requester(0, 0)).(Tracer); !ok {
		t.Error("a static source's traced requester is no Tracer")
	}
	if _, ok := must(Traced(st).Requester(0, 0)).(ResponseWatcher); ok {
		t.Error("a static source's traced requester claims to watch responses")
	}
}

func must(r Requester, err error) Requester {
	if err != nil {
		panic(err)
	}
	return r
}
