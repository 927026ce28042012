package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Mix is a declarative scenario: a list of endpoints sent in proportion to their weights.
// One iteration of the mix sends each endpoint weight/g times, where g is the greatest
// common divisor of the weights; each connection cycles through iterations, interleaved
// (smooth weighted round robin), so the shares are exact over whole iterations.
type Mix struct {
	File      string     `json:"file,omitempty"`
	Endpoints []Endpoint `json:"endpoints"`
}

// Endpoint is one request of a mix. Path (joined to the run's URL) or URL (same scheme,
// host and port as the run's URL) says where it goes; values may hold templates.
type Endpoint struct {
	Name     string   `json:"name,omitempty"`
	Method   string   `json:"method,omitempty"`
	Path     string   `json:"path,omitempty"`
	URL      string   `json:"url,omitempty"`
	Headers  []Header `json:"headers,omitempty"`
	Body     string   `json:"body,omitempty"`
	BodyFile string   `json:"body_file,omitempty"`
	Weight   int      `json:"weight"`
	// Line is where the endpoint starts in its file (0 when not read from a file).
	Line int `json:"-"`
}

// Methods lists the mix's distinct methods in the order of its endpoints, e.g. "GET+POST".
func (m *Mix) Methods() string {
	var out []string
	for _, e := range m.Endpoints {
		meth := Scenario{Method: e.Method}.MethodOrDefault()
		if !slices.Contains(out, meth) {
			out = append(out, meth)
		}
	}
	return strings.Join(out, "+")
}

// Label is the endpoint's name, or "METHOD path" when it has none.
func (e Endpoint) Label() string {
	if e.Name != "" {
		return e.Name
	}
	m := e.Method
	if m == "" {
		m = DefaultMethod
	}
	where := e.Path
	if where == "" {
		where = e.URL
	}
	return strings.ToUpper(m) + " " + where
}

// IterationSize is how many requests one iteration of the mix sends (the weights divided
// by their greatest common divisor, summed).
func (m *Mix) IterationSize() int {
	g := 0
	for _, e := range m.Endpoints {
		g = gcd(g, max(e.Weight, 0))
	}
	if g == 0 {
		return 0
	}
	n := 0
	for _, e := range m.Endpoints {
		n += e.Weight / g
	}
	return n
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// redact returns the mix as it may be saved: the redaction rule applied to every endpoint.
func (m *Mix) redact(extra []string, keepBody bool) *Mix {
	out := *m
	out.Endpoints = make([]Endpoint, len(m.Endpoints))
	for i, e := range m.Endpoints {
		e.Headers = RedactHeaders(e.Headers)
		e.URL = RedactURL(e.URL, extra...)
		e.Path = RedactURL(e.Path, extra...)
		e.Name = RedactText(e.Name, extra...)
		if e.Body != "" && !keepBody {
			e.Body = BodyDigest(e.Body)
		}
		out.Endpoints[i] = e
	}
	return &out
}

// LoadMix reads a scenario file (YAML, or JSON) and validates it.
func LoadMix(path string) (*Mix, error) {
	b, err := ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading scenario: %w", err)
	}
	m, err := decodeMix(path, b)
	if m == nil {
		return nil, err
	}
	// An unknown key does not hide the file's other problems: report them all at once.
	if err := errors.Join(err, m.Validate()); err != nil {
		return nil, err
	}
	return m, nil
}

// DecodeMix parses a scenario file; name is used in errors, which read "name:line: problem"
// and are all reported at once.
func DecodeMix(name string, data []byte) (*Mix, error) {
	m, err := decodeMix(name, data)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// decodeMix is DecodeMix that also returns what it could decode when a key was wrong (nil
// only when the file is not YAML at all), so the rest can still be validated.
func decodeMix(name string, data []byte) (*Mix, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s:%s", name, yamlError(err))
	}
	m := &Mix{File: name}
	d := decoder{name: name}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s:1: empty scenario: want a list of endpoints", name)
	}
	root := doc.Content[0]
	var defaults []Header
	switch root.Kind {
	case yaml.SequenceNode:
		m.Endpoints = d.endpoints(root)
	case yaml.MappingNode:
		for i := 0; i+1 < len(root.Content); i += 2 {
			k, v := root.Content[i], root.Content[i+1]
			switch k.Value {
			case "endpoints":
				m.Endpoints = d.endpoints(v)
			case "headers":
				defaults = d.headers(v)
			case "name":
				// A title for people; not used.
			default:
				d.errorf(k, "unknown key %q (want endpoints, headers or name)", k.Value)
			}
		}
	default:
		d.errorf(root, "want a list of endpoints or a mapping with endpoints")
	}
	for i := range m.Endpoints {
		m.Endpoints[i].Headers = mergeHeaders(defaults, m.Endpoints[i].Headers)
	}
	if len(d.errs) > 0 {
		return m, errors.Join(d.errs...)
	}
	return m, nil
}

// yamlError turns yaml.v3's "yaml: line 3: msg" into "3: msg".
func yamlError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		return rest
	}
	return "1: " + msg
}

// mergeHeaders returns the defaults an endpoint does not set itself, then its own.
func mergeHeaders(defaults, own []Header) []Header {
	var out []Header
	for _, d := range defaults {
		set := false
		for _, h := range own {
			set = set || strings.EqualFold(h.Name, d.Name)
		}
		if !set {
			out = append(out, d)
		}
	}
	return append(out, own...)
}

type decoder struct {
	name string
	errs []error
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	d.errs = append(d.errs, fmt.Errorf("%s:%d: %s", d.name, n.Line, fmt.Sprintf(format, args...)))
}

func (d *decoder) endpoints(n *yaml.Node) []Endpoint {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "endpoints: want a list")
		return nil
	}
	var eps []Endpoint
	for _, item := range n.Content {
		if item.Kind != yaml.MappingNode {
			d.errorf(item, "endpoint: want a mapping with method, path, ...")
			continue
		}
		e := Endpoint{Line: item.Line, Weight: 1}
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, v := item.Content[i], item.Content[i+1]
			switch k.Value {
			case "name":
				e.Name = d.str(k, v)
			case "method":
				e.Method = d.str(k, v)
			case "path":
				e.Path = d.str(k, v)
			case "url":
				e.URL = d.str(k, v)
			case "body":
				e.Body = d.str(k, v)
			case "body_file":
				e.BodyFile = d.str(k, v)
			case "headers":
				e.Headers = d.headers(v)
			case "weight":
				w, err := strconv.Atoi(d.str(k, v))
				if err != nil {
					d.errorf(v, "weight %q: want a whole number", v.Value)
				}
				e.Weight = w
			default:
				d.errorf(k, "unknown key %q (want name, method, path, url, headers, body, body_file or weight)", k.Value)
			}
		}
		eps = append(eps, e)
	}
	return eps
}

func (d *decoder) str(k, v *yaml.Node) string {
	if v.Kind != yaml.ScalarNode {
		d.errorf(v, "%s: want a single value", k.Value)
		return ""
	}
	return v.Value
}

// headers reads a mapping (Name: value) or a list of "Name: value" strings.
func (d *decoder) headers(n *yaml.Node) []Header {
	var hs []Header
	add := func(at *yaml.Node, s string) {
		h, err := ParseHeader(s)
		if err != nil {
			d.errorf(at, "%v", err)
			return
		}
		hs = append(hs, h)
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			add(k, k.Value+": "+d.str(k, v))
		}
	case yaml.SequenceNode:
		for _, v := range n.Content {
			add(v, d.str(v, v))
		}
	default:
		d.errorf(n, "headers: want a mapping of name: value")
	}
	return hs
}

// MaxEndpoints is the most endpoints a mix may have.
const MaxEndpoints = 255

// maxIteration bounds the requests of one iteration (the schedule is kept in memory).
const maxIteration = 100000

// Validate reports every problem of the mix at once, each with its line.
func (m *Mix) Validate() error {
	var errs []error
	at := func(e Endpoint, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", m.File, e.Line, fmt.Sprintf(format, args...)))
	}
	if len(m.Endpoints) == 0 {
		errs = append(errs, fmt.Errorf("%s:1: no endpoints", m.File))
	}
	if len(m.Endpoints) > MaxEndpoints {
		errs = append(errs, fmt.Errorf("%s:1: %d endpoints, at most %d", m.File, len(m.Endpoints), MaxEndpoints))
	}
	names := map[string]int{}
	for _, e := range m.Endpoints {
		if prev, ok := names[e.Label()]; ok {
			at(e, "endpoint %q is named twice (first at line %d): give each a distinct name", e.Label(), prev)
		}
		names[e.Label()] = e.Line
		if e.Method != "" && !validToken(e.Method) {
			at(e, "bad method %q", e.Method)
		}
		switch {
		case e.Path == "" && e.URL == "":
			at(e, "give path or url")
		case e.Path != "" && e.URL != "":
			at(e, "give path or url, not both")
		case e.Path != "" && !strings.HasPrefix(e.Path, "/"):
			at(e, "path %q must start with /", e.Path)
		}
		if e.URL != "" {
			if _, err := ParseTarget(e.URL); err != nil && !strings.Contains(e.URL, "{{") {
				at(e, "%v", err)
			}
		}
		if e.Body != "" && e.BodyFile != "" {
			at(e, "give body or body_file, not both")
		}
		if e.BodyFile != "" {
			if _, err := os.Stat(resolve(filepath.Dir(m.File), e.BodyFile)); err != nil {
				at(e, "body_file: %v", err)
			}
		}
		if e.Weight < 1 {
			at(e, "weight %d: want 1 or more", e.Weight)
		}
		for _, s := range append([]string{e.Path, e.URL, e.Body}, headerValues(e.Headers)...) {
			if err := checkTemplate(s, filepath.Dir(m.File)); err != nil {
				at(e, "%v", err)
			}
		}
		for _, h := range e.Headers {
			if _, err := ParseHeader(h.Name + ": " + h.Value); err != nil {
				at(e, "%v", err)
			}
		}
	}
	if n := m.IterationSize(); n > maxIteration {
		errs = append(errs, fmt.Errorf("%s:1: one iteration of these weights is %d requests (after dividing by their common divisor); keep it under %d", m.File, n, maxIteration))
	}
	return errors.Join(errs...)
}

func headerValues(hs []Header) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Value
	}
	return out
}

// resolve makes a path named in a scenario file relative to the file's directory.
func resolve(dir, p string) string {
	if filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}
