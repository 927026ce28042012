package scenario

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// MixSource sends a mix: each connection cycles through the mix's iteration schedule.
// Endpoints without templates are serialized once; the others are rendered per request
// into the connection's own buffers.
type MixSource struct {
	names    []string
	eps      []compiled
	schedule []uint8 // one iteration: endpoint indexes in smooth weighted round-robin order
	seed     uint64
}

type compiled struct {
	raw  []byte    // the whole request, when nothing is templated
	head *template // request line and headers, without the final empty line
	body *template
	// hasLen: the endpoint sets Content-Length or Transfer-Encoding itself.
	hasLen bool
	isHead bool
}

// Source compiles the mix against base, the run's request: its URL gives scheme, host and
// port (an endpoint's path replaces the URL's path), its headers apply to every endpoint
// that does not set them.
func (m *Mix) Source(base Scenario) (*MixSource, error) {
	t, err := ParseTarget(base.URL)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(m.File)
	s := &MixSource{seed: uint64(time.Now().UnixNano())}
	for _, e := range m.Endpoints {
		c, err := compile(e, t, base.Headers, dir)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", m.File, e.Line, err)
		}
		s.eps = append(s.eps, c)
		s.names = append(s.names, e.Label())
	}
	s.schedule = schedule(m.Endpoints)
	if len(s.schedule) == 0 {
		return nil, fmt.Errorf("%s: no endpoints with a positive weight", m.File)
	}
	return s, nil
}

func compile(e Endpoint, t Target, defaults []Header, dir string) (compiled, error) {
	path := e.Path
	if e.URL != "" {
		var err error
		if path, err = urlPath(e.URL, t); err != nil {
			return compiled{}, err
		}
	}
	method := strings.ToUpper(e.Method)
	if method == "" {
		method = DefaultMethod
	}
	body := e.Body
	if e.BodyFile != "" {
		b, err := ReadFile(resolve(dir, e.BodyFile))
		if err != nil {
			return compiled{}, fmt.Errorf("reading body file: %w", err)
		}
		body = string(b)
	}
	headers := mergeHeaders(defaults, e.Headers)
	c := compiled{isHead: method == "HEAD"}
	head := &template{}
	add := func(s string, tmpl bool) error {
		if !tmpl {
			head.parts = append(head.parts, part{lit: s})
			return nil
		}
		pt, err := parseTemplate(s, dir)
		if err != nil {
			return err
		}
		head.parts = append(head.parts, pt.parts...)
		return nil
	}
	hasHost, hasUA, hasLen := presentHeaders(headers)
	c.hasLen = hasLen
	_ = add(method+" ", false)
	if err := add(path, true); err != nil {
		return c, err
	}
	_ = add(" HTTP/1.1\r\n", false)
	if !hasHost {
		_ = add("Host: "+t.HostHdr+"\r\n", false)
	}
	if !hasUA {
		_ = add("User-Agent: "+UserAgent+"\r\n", false)
	}
	for _, h := range headers {
		_ = add(h.Name+": ", false)
		if err := add(h.Value, true); err != nil {
			return c, err
		}
		_ = add("\r\n", false)
	}
	bt, err := parseTemplate(body, dir)
	if err != nil {
		return c, err
	}
	c.head, c.body = head, bt
	if head.static() && bt.static() {
		c.raw, _ = c.render(nil, nil, nil)
	}
	return c, nil
}

// urlPath checks that an endpoint's URL goes to the run's target and returns its path.
func urlPath(u string, t Target) (string, error) {
	rest, ok := strings.CutPrefix(u, t.Scheme+"://")
	if !ok {
		return "", fmt.Errorf("url %q: want the run's scheme and host %s://%s", u, t.Scheme, t.HostHdr)
	}
	host, path := rest, "/"
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		host, path = rest[:i], rest[i:]
		if path[0] == '?' {
			path = "/" + path
		}
	}
	o, err := ParseTarget(t.Scheme + "://" + host + "/")
	if err != nil {
		return "", err
	}
	if o.Address != t.Address {
		return "", fmt.Errorf("url %q goes to %s, not the run's target %s: one run loads one host", u, o.Address, t.Address)
	}
	return path, nil
}

// render builds the request into b (bodyBuf is scratch space for the body).
func (c *compiled) render(r *rand.Rand, b, bodyBuf []byte) (req, body []byte) {
	b = c.head.render(r, b[:0])
	body = c.body.render(r, bodyBuf[:0])
	if len(body) > 0 && !c.hasLen {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, body...), body
}

// schedule is one iteration in smooth weighted round-robin order: each endpoint appears
// weight/gcd times, spread out rather than in runs.
func schedule(eps []Endpoint) []uint8 {
	g := 0
	for _, e := range eps {
		g = gcd(g, max(e.Weight, 0))
	}
	if g == 0 {
		return nil
	}
	w := make([]int, len(eps))
	total := 0
	for i, e := range eps {
		w[i] = max(e.Weight, 0) / g
		total += w[i]
	}
	cur := make([]int, len(eps))
	out := make([]uint8, 0, total)
	for len(out) < total {
		best := 0
		for i := range cur {
			cur[i] += w[i]
			if cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		out = append(out, uint8(best))
	}
	return out
}

// Endpoints names the endpoints, in the file's order.
func (s *MixSource) Endpoints() []string { return s.names }

// IterationSize is the number of requests in one iteration of the mix.
func (s *MixSource) IterationSize() int { return len(s.schedule) }

// Requester returns connection conn's requester: it starts at its own place in the
// schedule so connections do not all hit the same endpoint at once.
func (s *MixSource) Requester(thread, conn int) (Requester, error) {
	pos := 0
	if n := len(s.schedule); n > 0 {
		pos = (conn * 7919) % n
	}
	return &mixConn{s: s, pos: pos, rng: rand.New(rand.NewPCG(s.seed, uint64(conn)))}, nil
}

// mixConn is one connection's position in the schedule and its buffers.
type mixConn struct {
	s    *MixSource
	pos  int
	rng  *rand.Rand
	buf  []byte
	body []byte
}

// Request returns the next endpoint's request.
func (c *mixConn) Request() ([]byte, int, int, bool) {
	ep := int(c.s.schedule[c.pos])
	c.pos++
	if c.pos == len(c.s.schedule) {
		c.pos = 0
	}
	e := &c.s.eps[ep]
	if e.raw != nil {
		return e.raw, 1, ep, e.isHead
	}
	c.buf, c.body = e.render(c.rng, c.buf, c.body)
	return c.buf, 1, ep, e.isHead
}
