package profcap

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// maxExpositionLine bounds one line of a metrics page.
const maxExpositionLine = 1 << 20

// sampleSet is the first value of each sample name on a metrics page
// (an unlabelled sample wins over labelled ones of the same name).
type sampleSet map[string]float64

// parseExposition reads the Prometheus text exposition format (also the
// sample lines of OpenMetrics) and keeps, for each sample name, one value:
// the unlabelled sample if there is one, else the first. Comments, HELP and
// TYPE lines, timestamps and exemplars are skipped. The first malformed line
// is an error naming its line number; a page without samples is an error.
//
// It is hand-written because github.com/prometheus/common/expfmt (v0.73.1)
// needs github.com/pandatix/go-abnf, which the module proxy refuses to serve.
func parseExposition(r io.Reader) (sampleSet, error) {
	out := sampleSet{}
	labelled := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxExpositionLine)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimLeft(sc.Text(), " \t")
		if line == "" || line[0] == '#' {
			continue
		}
		name, hasLabels, value, err := parseSampleLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if _, ok := out[name]; !ok || (labelled[name] && !hasLabels) {
			out[name] = value
			labelled[name] = hasLabels
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	if len(out) == 0 {
		return nil, errors.New("no metric samples")
	}
	return out, nil
}

// parseSampleLine parses `name{l="v",...} value [timestamp] [# exemplar]`,
// where the name may instead be a quoted string inside the braces.
func parseSampleLine(line string) (name string, hasLabels bool, value float64, err error) {
	i := 0
	for i < len(line) && isNameByte(line[i], i == 0) {
		i++
	}
	name, rest := line[:i], line[i:]
	if strings.HasPrefix(rest, "{") {
		var quoted string
		quoted, hasLabels, rest, err = parseLabels(rest[1:])
		if err != nil {
			return "", false, 0, err
		}
		if quoted != "" {
			if name != "" {
				return "", false, 0, fmt.Errorf("metric %q also named %q in braces", name, quoted)
			}
			name = quoted
		}
	}
	if name == "" {
		return "", false, 0, fmt.Errorf("no metric name in %q", clip(line))
	}
	if rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
		return "", false, 0, fmt.Errorf("metric %q: want a space and a value, got %q", name, clip(rest))
	}
	fields := strings.Fields(rest)
	if i := slices.Index(fields, "#"); i >= 0 {
		fields = fields[:i]
	}
	if len(fields) == 0 || len(fields) > 2 {
		return "", false, 0, fmt.Errorf("metric %q: want a value and an optional timestamp, got %q", name, clip(rest))
	}
	value, err = strconv.ParseFloat(fields[0], 64)
	if err != nil || strings.ContainsAny(fields[0], "_xXpP") {
		return "", false, 0, fmt.Errorf("metric %q: bad value %q", name, clip(fields[0]))
	}
	if len(fields) == 2 {
		if _, err := strconv.ParseFloat(fields[1], 64); err != nil {
			return "", false, 0, fmt.Errorf("metric %q: bad timestamp %q", name, clip(fields[1]))
		}
	}
	return name, hasLabels, value, nil
}

// parseLabels reads up to and including the closing brace. A bare quoted
// string is the metric name (the quoted-name syntax); it is returned apart.
func parseLabels(s string) (quotedName string, hasLabels bool, rest string, err error) {
	for {
		s = strings.TrimLeft(s, " \t")
		if strings.HasPrefix(s, "}") {
			return quotedName, hasLabels, s[1:], nil
		}
		if s == "" {
			return "", false, "", errors.New("unterminated label set")
		}
		var key string
		if s[0] == '"' {
			key, s, err = parseQuoted(s)
			if err != nil {
				return "", false, "", err
			}
		} else {
			i := 0
			for i < len(s) && isNameByte(s[i], i == 0) && s[i] != ':' {
				i++
			}
			if i == 0 {
				return "", false, "", fmt.Errorf("bad label name at %q", clip(s))
			}
			key, s = s[:i], s[i:]
		}
		s = strings.TrimLeft(s, " \t")
		if strings.HasPrefix(s, "=") {
			s = strings.TrimLeft(s[1:], " \t")
			if !strings.HasPrefix(s, `"`) {
				return "", false, "", fmt.Errorf("label %q: value is not quoted", key)
			}
			if _, s, err = parseQuoted(s); err != nil {
				return "", false, "", fmt.Errorf("label %q: %w", key, err)
			}
			hasLabels = true
		} else if quotedName == "" && key != "" {
			quotedName = key
		} else {
			return "", false, "", fmt.Errorf("label %q has no value", key)
		}
		s = strings.TrimLeft(s, " \t")
		if strings.HasPrefix(s, ",") {
			s = s[1:]
		} else if !strings.HasPrefix(s, "}") {
			return "", false, "", fmt.Errorf("want , or } at %q", clip(s))
		}
	}
}

// parseQuoted reads a double-quoted string with \\, \" and \n escapes.
func parseQuoted(s string) (string, string, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), s[i+1:], nil
		case '\\':
			if i+1 == len(s) {
				return "", "", errors.New("unterminated quoted string")
			}
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case '\\', '"':
				b.WriteByte(s[i])
			default:
				return "", "", fmt.Errorf(`bad escape \%c`, s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", errors.New("unterminated quoted string")
}

func isNameByte(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == ':':
		return true
	case c >= '0' && c <= '9':
		return !first
	}
	return false
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
