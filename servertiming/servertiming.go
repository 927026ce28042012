// Package servertiming reads the W3C Server-Timing response header: the target's own account of
// where a response's time went, as metrics with a duration (milliseconds) and a description.
// Next walks a header value metric by metric without allocating, for the engine's response
// parser; Parse collects them.
package servertiming

import (
	"errors"
	"strconv"
)

// Metric is one server-timing-metric: a name (a token), its dur parameter in milliseconds
// (HasDur false when absent) and its desc parameter (unquoted, "" when absent).
type Metric struct {
	Name   []byte
	Dur    float64
	HasDur bool
	Desc   []byte
}

// ErrMalformed marks a metric that does not follow the header's syntax; Next skips it.
var ErrMalformed = errors.New("malformed server-timing metric")

// Next reads the first metric of a header value (or of what Next left of it) and returns
// the rest. A malformed metric returns ErrMalformed, with rest past it so the caller can go
// on; empty list elements are skipped. ok is false when nothing is left.
func Next(v []byte) (m Metric, rest []byte, ok bool, err error) {
	i := skipSeparators(v, 0)
	if i == len(v) {
		return Metric{}, nil, false, nil
	}
	start := i
	for i < len(v) && isTokenChar(v[i]) {
		i++
	}
	if i == start {
		return Metric{}, v[skipElement(v, i):], true, ErrMalformed
	}
	m.Name = v[start:i]
	hasDesc := false
	for {
		i = skipOWS(v, i)
		if i == len(v) || v[i] == ',' {
			return m, v[i:], true, nil
		}
		if v[i] != ';' {
			return Metric{}, v[skipElement(v, i):], true, ErrMalformed
		}
		i = skipOWS(v, i+1)
		ps := i
		for i < len(v) && isTokenChar(v[i]) {
			i++
		}
		name := v[ps:i]
		if len(name) == 0 {
			return Metric{}, v[skipElement(v, i):], true, ErrMalformed
		}
		i = skipOWS(v, i)
		var val []byte
		if i < len(v) && v[i] == '=' {
			i = skipOWS(v, i+1)
			var good bool
			if val, i, good = paramValue(v, i); !good {
				return Metric{}, v[skipElement(v, i):], true, ErrMalformed
			}
		}
		switch {
		case equalFold(name, "dur") && !m.HasDur:
			d, good := parseDur(val)
			if !good {
				return Metric{}, v[skipElement(v, i):], true, ErrMalformed
			}
			m.Dur, m.HasDur = d, true
		case equalFold(name, "desc") && !hasDesc:
			m.Desc, hasDesc = val, true
		}
	}
}

// Parse returns every well-formed metric of a header value and how many malformed ones it
// skipped.
func Parse(v []byte) (metrics []Metric, malformed int) {
	for {
		m, rest, ok, err := Next(v)
		if !ok {
			return metrics, malformed
		}
		if err != nil {
			malformed++
		} else {
			metrics = append(metrics, m)
		}
		v = rest
	}
}

// paramValue reads a token or a quoted string at v[i:]; a quoted string is returned without
// its quotes and with its quoted pairs still escaped (desc is not interpreted further).
func paramValue(v []byte, i int) (val []byte, next int, ok bool) {
	if i < len(v) && v[i] == '"' {
		for j := i + 1; j < len(v); j++ {
			switch v[j] {
			case '\\':
				j++
			case '"':
				return v[i+1 : j], j + 1, true
			}
		}
		return nil, len(v), false // unterminated
	}
	j := i
	for j < len(v) && isTokenChar(v[j]) {
		j++
	}
	return v[i:j], j, j > i
}

// parseDur reads a non-negative decimal number of milliseconds ("2", "0.25", "1e3").
func parseDur(b []byte) (float64, bool) {
	var whole, frac float64
	scale := 1.0
	i, digits := 0, 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		whole = whole*10 + float64(b[i]-'0')
		digits++
	}
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			frac = frac*10 + float64(b[i]-'0')
			scale *= 10
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i == len(b) {
		return whole + frac/scale, true
	}
	if b[i] != 'e' && b[i] != 'E' {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(b), 64) // rare: an exponent
	if err != nil || f < 0 || f != f {
		return 0, false
	}
	return f, true
}

// skipElement returns the index just past the list element that v[i:] is in: after its
// comma, or len(v); commas inside quoted strings do not count.
func skipElement(v []byte, i int) int {
	quoted := false
	for ; i < len(v); i++ {
		switch c := v[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == ',':
			return i + 1
		}
	}
	return len(v)
}

func skipSeparators(v []byte, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == ',') {
		i++
	}
	return i
}

func skipOWS(v []byte, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	return i
}

// isTokenChar reports whether c may appear in an HTTP token (RFC 9110 tchar).
func isTokenChar(c byte) bool { return c < 128 && tchar[c] }

var tchar = func() (t [128]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// equalFold compares an ASCII token with a lower-case word.
func equalFold(b []byte, word string) bool {
	if len(b) != len(word) {
		return false
	}
	for i := range b {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != word[i] {
			return false
		}
	}
	return true
}
