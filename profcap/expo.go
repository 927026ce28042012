package profcap

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// sampleSet is one value per sample name on a metrics page (see parseExposition).
type sampleSet map[string]float64

// parseExposition reads a Prometheus text exposition page (format 0.0.4, with the quoted
// UTF-8 names of newer servers) and keeps one value per sample name: for a counter, gauge
// or untyped metric the unlabelled sample if there is one, else the first; for a summary or
// histogram (declared by a TYPE line) only its _sum and _count, chosen likewise. A malformed
// line is an error naming its number; a page without samples is an error.
func parseExposition(r io.Reader) (sampleSet, error) {
	out := sampleSet{}
	labelled := map[string]bool{} // names whose kept value came from a labelled sample
	typed := map[string]string{}  // family name -> summary or histogram
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimLeft(sc.Text(), " \t")
		if line == "" {
			continue
		}
		if line[0] == '#' {
			if f := strings.Fields(line); len(f) >= 4 && f[1] == "TYPE" && (f[3] == "summary" || f[3] == "histogram") {
				typed[f[2]] = f[3]
			}
			continue
		}
		name, hasLabels, v, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("text format parsing error in line %d: %w", n, err)
		}
		if skipSample(name, typed) {
			continue
		}
		if _, seen := out[name]; !seen || (labelled[name] && !hasLabels) {
			out[name], labelled[name] = v, hasLabels
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no metric samples")
	}
	return out, nil
}

// skipSample reports whether a sample belongs to a summary or histogram family without
// being its _sum or _count (a quantile, a bucket, a creation time).
func skipSample(name string, typed map[string]string) bool {
	if typed[name] != "" {
		return true
	}
	for _, suffix := range []string{"_bucket", "_created", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && typed[base] != "" {
			return suffix == "_bucket" || suffix == "_created"
		}
	}
	return false
}

// parseSample reads one sample line: name, optional {labels}, value, optional timestamp.
func parseSample(line string) (name string, hasLabels bool, v float64, err error) {
	rest := line
	if rest[0] != '{' {
		i := 0
		for i < len(rest) && isNameChar(rest[i], i == 0, true) {
			i++
		}
		if i == 0 {
			return "", false, 0, fmt.Errorf("invalid metric name in %q", clip(line))
		}
		name, rest = rest[:i], rest[i:]
	}
	if rest != "" && rest[0] == '{' {
		var qname string
		qname, hasLabels, rest, err = parseLabels(rest[1:], name == "")
		if err != nil {
			return "", false, 0, err
		}
		if name == "" {
			name = qname
		}
	}
	if name == "" {
		return "", false, 0, fmt.Errorf("invalid metric name in %q", clip(line))
	}
	if rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
		return "", false, 0, fmt.Errorf("invalid metric name or labels in %q", clip(line))
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return "", false, 0, fmt.Errorf("expected float as value in %q", clip(line))
	}
	if v, err = parseValue(f[0]); err != nil {
		return "", false, 0, fmt.Errorf("expected float as value, got %q", clip(f[0]))
	}
	if len(f) > 1 {
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			return "", false, 0, fmt.Errorf("expected integer as timestamp, got %q", clip(f[1]))
		}
	}
	if len(f) > 2 {
		return "", false, 0, fmt.Errorf("unexpected %q after the timestamp", clip(f[2]))
	}
	return name, hasLabels, v, nil
}

// parseLabels reads label pairs up to the closing '}' and returns what follows it. When
// wantName is set, a quoted string standing alone is the metric's name.
func parseLabels(s string, wantName bool) (name string, any bool, rest string, err error) {
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return "", false, "", errors.New("labels not closed with '}'")
		}
		if s[0] == '}' {
			return name, any, s[1:], nil
		}
		var label string
		if s[0] == '"' {
			if label, s, err = parseQuoted(s[1:]); err != nil {
				return "", false, "", fmt.Errorf("label name: %w", err)
			}
		} else {
			i := 0
			for i < len(s) && isNameChar(s[i], i == 0, false) {
				i++
			}
			if i == 0 {
				return "", false, "", fmt.Errorf("invalid label name at %q", clip(s))
			}
			label, s = s[:i], s[i:]
		}
		s = strings.TrimLeft(s, " \t")
		switch {
		case s != "" && s[0] == '=':
			s = strings.TrimLeft(s[1:], " \t")
			if s == "" || s[0] != '"' {
				return "", false, "", fmt.Errorf("label value of %q is not quoted", label)
			}
			if _, s, err = parseQuoted(s[1:]); err != nil {
				return "", false, "", fmt.Errorf("label value of %q: %w", label, err)
			}
			any = true
		case wantName && name == "" && !any:
			name = label // {"metric.name", ...}
		default:
			return "", false, "", fmt.Errorf("label %q has no value", label)
		}
		s = strings.TrimLeft(s, " \t")
		if s != "" && s[0] == ',' {
			s = s[1:]
		} else if s == "" || s[0] != '}' {
			return "", false, "", errors.New("expected ',' or '}' after a label")
		}
	}
}

// parseQuoted reads a double-quoted string's body (after the opening quote) with the
// format's escapes (\\, \", \n) and returns it and what follows the closing quote.
func parseQuoted(s string) (string, string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), s[i+1:], nil
		case '\\':
			if i+1 == len(s) {
				return "", "", errors.New("not terminated")
			}
			i++
			switch s[i] {
			case '\\', '"':
				b.WriteByte(s[i])
			case 'n':
				b.WriteByte('\n')
			default:
				return "", "", fmt.Errorf("invalid escape \\%c", s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", errors.New("not terminated")
}

// parseValue reads a sample value: a decimal float, +Inf, -Inf or NaN (Go's hexadecimal
// and underscore forms are not the format's).
func parseValue(s string) (float64, error) {
	if strings.ContainsAny(s, "xX_") {
		return 0, errors.New("not a decimal float")
	}
	return strconv.ParseFloat(s, 64)
}

// isNameChar reports whether c may appear in a metric name (colons allowed) or a label name.
func isNameChar(c byte, first, metric bool) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || (metric && c == ':') || (!first && c >= '0' && c <= '9')
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
