package target

import (
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []string // substrings of the error; none means valid
	}{
		// The zero value is a usable plain server on a free loopback port.
		{"zero", Config{}, nil},
		// Loopback names and addresses are accepted, IPv6 too.
		{"loopback", Config{Addr: "[::1]:0"}, nil},
		{"localhost", Config{Addr: "localhost:8080"}, nil},
		// Every interface or a remote address is refused without AllowRemote...
		{"all interfaces", Config{Addr: ":8080"}, []string{"not a loopback"}},
		{"remote", Config{Addr: "10.0.0.1:80"}, []string{"not a loopback"}},
		// ...and accepted with it.
		{"remote allowed", Config{Addr: "0.0.0.0:0", AllowRemote: true}, nil},
		// An address without a port is reported.
		{"no port", Config{Addr: "127.0.0.1"}, []string{"missing port"}},
		// A full demo config is valid.
		{"demo", Config{Demo: true, Middleware: []string{"logger", "recovery"}, Pprof: true, Metrics: true}, nil},
		// "none" alone turns the chain off; combined it is an error.
		{"none", Config{Demo: true, Middleware: []string{"none"}}, nil},
		{"none mixed", Config{Demo: true, Middleware: []string{"none", "logger"}}, []string{`"none" cannot be combined`}},
		// Unknown and repeated middlewares are reported.
		{"unknown mw", Config{Demo: true, Middleware: []string{"gzip"}}, []string{`unknown middleware "gzip"`}},
		{"twice", Config{Demo: true, Middleware: []string{"logger", "logger"}}, []string{"given twice"}},
		// Middleware without demo mode is a mistake.
		{"mw without demo", Config{Middleware: []string{"logger"}}, []string{"needs demo"}},
		// Negative or huge durations, bad statuses and sizes.
		{"negative delay", Config{Delay: -time.Second}, []string{"delay -1s"}},
		{"huge jitter", Config{Jitter: time.Hour}, []string{"jitter 1h0m0s"}},
		{"status", Config{Status: 42}, []string{"status 42"}},
		{"size", Config{Size: -1}, []string{"size -1"}},
		// A stall needs a longer period, and a period needs a stall.
		{"stall alone", Config{Stall: time.Second}, []string{"stall needs stall-every"}},
		{"stall too long", Config{Stall: 2 * time.Second, StallEvery: time.Second}, []string{"shorter than"}},
		{"every alone", Config{StallEvery: time.Second}, []string{"stall-every needs stall"}},
		{"stall ok", Config{Stall: 500 * time.Millisecond, StallEvery: 5 * time.Second}, nil},
		// The ceiling must be a finite non-negative number.
		{"negative rps", Config{MaxRPS: -1}, []string{"max-rps -1"}},
		{"negative max-conns", Config{MaxConns: -1}, []string{"max-conns -1"}},
		// Every problem is reported at once.
		{"several", Config{Addr: ":1", Status: 1, MaxRPS: -2}, []string{"not a loopback", "status 1", "max-rps -2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error mentioning %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to mention %q", err, w)
				}
			}
		})
	}
}

func TestConfigString(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		// The zero value says where it listens.
		{Config{}, "plain target on 127.0.0.1:0"},
		// Demo mode names its chain and options.
		{Config{Demo: true, Pprof: true}, "demo target on 127.0.0.1:0 (middleware request-id,logger,dump,recovery; pprof)"},
		// Timing knobs are listed.
		{Config{Addr: "127.0.0.1:9", Stall: time.Second, StallEvery: 5 * time.Second, MaxRPS: 100},
			"plain target on 127.0.0.1:9 (stall 1s every 5s; max 100 req/s)"},
	}
	for _, tt := range tests {
		if got := tt.cfg.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestStallRelease(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := StallSchedule{Start: start, Stall: 500 * time.Millisecond, Every: 5 * time.Second}
	at := func(d time.Duration) time.Time { return start.Add(d) }
	tests := []struct {
		t, want time.Duration
	}{
		// The first stall begins at start: held to its end.
		{0, 500 * time.Millisecond},
		{499 * time.Millisecond, 500 * time.Millisecond},
		// The end of a stall is outside it.
		{500 * time.Millisecond, 500 * time.Millisecond},
		// Between stalls a response is not held.
		{3 * time.Second, 3 * time.Second},
		{4999 * time.Millisecond, 4999 * time.Millisecond},
		// Later stalls repeat every period.
		{5 * time.Second, 5500 * time.Millisecond},
		{10*time.Second + 250*time.Millisecond, 10500 * time.Millisecond},
		// Before start nothing is held.
		{-time.Second, -time.Second},
	}
	for _, tt := range tests {
		if got := s.Release(at(tt.t)); !got.Equal(at(tt.want)) {
			t.Errorf("Release(start%+v) = start%+v, want start%+v", tt.t, got.Sub(start), tt.want)
		}
	}
	// The zero schedule never holds anything.
	if got := (StallSchedule{}).Release(at(time.Second)); !got.Equal(at(time.Second)) {
		t.Errorf("zero schedule Release = %v, want the time itself", got)
	}
}

func TestLimiterReserve(t *testing.T) {
	l := newLimiter(100) // one slot every 10ms
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		now, want time.Duration
	}{
		// The first request goes at once.
		{0, 0},
		// Requests arriving together queue 10ms apart.
		{0, 10 * time.Millisecond},
		{0, 20 * time.Millisecond},
		// A request after the queue has drained goes at once; idle time is not saved up.
		{100 * time.Millisecond, 100 * time.Millisecond},
		{100 * time.Millisecond, 110 * time.Millisecond},
	}
	for i, tt := range tests {
		if got := l.reserve(now.Add(tt.now)).Sub(now); got != tt.want {
			t.Errorf("reserve #%d at %v = %v, want %v", i, tt.now, got, tt.want)
		}
	}
}

func TestBody(t *testing.T) {
	// writeBody from any offset produces the same bytes as Body.
	want := Body(200_000)
	var got strings.Builder
	if err := writeBody(&got, 0, 70_000); err != nil {
		t.Fatal(err)
	}
	if err := writeBody(&got, 70_000, 130_000); err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Fatalf("writeBody in two parts differs from Body(200000)")
	}
	if string(Body(5)) != "abcde" {
		t.Errorf("Body(5) = %q, want %q", Body(5), "abcde")
	}
}
