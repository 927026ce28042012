// Package scenario says what to send: the URL, method, headers and body of the request, or a
// source that makes requests (a wrk Lua script, a weighted mix of endpoints) per connection.
package scenario

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// DefaultMethod is the method used when none is given.
const DefaultMethod = "GET"

// Header is one request header.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Scenario is a single request, sent over and over. Its zero value plus a URL is a GET.
type Scenario struct {
	URL     string   `json:"url"`
	Method  string   `json:"method,omitempty"`
	Headers []Header `json:"headers,omitempty"`
	// Body is the request body; BodyFile names where it was read from, if anywhere.
	Body     string `json:"body,omitempty"`
	BodyFile string `json:"body_file,omitempty"`
	// Script is the wrk Lua script the requests came from, if any.
	Script string `json:"script,omitempty"`
	// Mix is the weighted mix of endpoints sent instead of the single request, if any.
	Mix *Mix `json:"mix,omitempty"`
	// SecretParams are more query parameter names to redact (--redact); KeepBody saves the
	// body as it is (--keep-body) instead of its size and hash (BodySize, BodySHA256).
	SecretParams []string `json:"redact,omitempty"`
	KeepBody     bool     `json:"keep_body,omitempty"`
	BodySize     int      `json:"body_size,omitempty"`
	BodySHA256   string   `json:"body_sha256,omitempty"`
}

// ParseHeader reads "Name: value" (wrk's -H form).
func ParseHeader(s string) (Header, error) {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || !validToken(name) {
		return Header{}, fmt.Errorf("malformed header %q: want \"Name: value\"", s)
	}
	if strings.ContainsAny(value, "\r\n") {
		return Header{}, fmt.Errorf("malformed header %q: value contains a line break", s)
	}
	return Header{Name: name, Value: strings.TrimSpace(value)}, nil
}

func validToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return true
}

// Target is where the requests go, parsed from the URL.
type Target struct {
	Scheme  string // http or https (grpc:// is http, grpcs:// is https, with GRPC set)
	Host    string // host name or IP, without brackets
	Port    string
	Address string // host:port to dial
	Path    string // path and query, "/" at least
	HostHdr string // value of the Host header
	GRPC    bool   // a gRPC method (grpc:// or grpcs://): Path is /package.Service/Method
}

// ParseTarget checks rawURL and returns the target it names.
func ParseTarget(rawURL string) (Target, error) {
	if rawURL == "" {
		return Target{}, errors.New("no URL given")
	}
	shown := RedactURL(rawURL) // error messages never show a secret
	if !strings.Contains(rawURL, "://") {
		// url.Parse reads "127.0.0.1:8080/x" as a path or "localhost:8080" as a scheme.
		return Target{}, fmt.Errorf("URL %q has no scheme: did you mean http://%s ?", shown, strings.TrimLeft(shown, "/:"))
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return Target{}, fmt.Errorf("URL %q does not parse: %v", shown, errors.Unwrap(err))
	}
	grpc := u.Scheme == "grpc" || u.Scheme == "grpcs"
	if u.Scheme != "http" && u.Scheme != "https" && !grpc {
		return Target{}, fmt.Errorf("URL %q: unsupported scheme %q (want http, https, grpc or grpcs)", shown, u.Scheme)
	}
	if u.Hostname() == "" {
		return Target{}, fmt.Errorf("URL %q has no host", shown)
	}
	scheme := u.Scheme
	if grpc {
		scheme = strings.Replace(scheme, "grpc", "http", 1)
		if err := grpcPath(u.EscapedPath(), u.RawQuery); err != nil {
			return Target{}, fmt.Errorf("URL %q: %w", shown, err)
		}
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return Target{}, fmt.Errorf("URL %q: bad port %q", shown, port)
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	return Target{
		Scheme: scheme, Host: u.Hostname(), Port: port,
		Address: net.JoinHostPort(u.Hostname(), port), Path: path, HostHdr: u.Host, GRPC: grpc,
	}, nil
}

// grpcPath checks the path of a grpc:// URL: /package.Service/Method, no query.
func grpcPath(path, query string) error {
	svc, method, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if !strings.HasPrefix(path, "/") || !ok || svc == "" || method == "" || strings.Contains(method, "/") || query != "" {
		return fmt.Errorf("a gRPC URL's path is /package.Service/Method, got %q", path+query)
	}
	return nil
}

// Validate reports every problem with s at once.
func (s Scenario) Validate() error {
	var errs []error
	if _, err := ParseTarget(s.URL); err != nil {
		errs = append(errs, err)
	}
	if s.Method != "" && !validToken(s.Method) {
		errs = append(errs, fmt.Errorf("bad method %q", s.Method))
	}
	for _, h := range s.Headers {
		if _, err := ParseHeader(h.Name + ": " + h.Value); err != nil {
			errs = append(errs, err)
		}
	}
	if err := checkLength(s.Headers, s.Body); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// MethodOrDefault is the method to send.
func (s Scenario) MethodOrDefault() string {
	if s.Method == "" {
		return DefaultMethod
	}
	return strings.ToUpper(s.Method)
}

// String describes the request in one line, e.g. "GET http://127.0.0.1:8080/healthz".
func (s Scenario) String() string {
	return s.MethodOrDefault() + " " + s.URL
}

// UserAgent is sent unless the scenario sets its own.
const UserAgent = "apiperf"

// Raw serializes the request once: request line, Host, the headers, Content-Length when
// there is a body, and the body.
func (s Scenario) Raw() ([]byte, error) {
	t, err := ParseTarget(s.URL)
	if err != nil {
		return nil, err
	}
	return Format(s.MethodOrDefault(), t.Path, t.HostHdr, s.Headers, []byte(s.Body)), nil
}

// Format builds a raw HTTP/1.1 request. Host and User-Agent are added when absent, and
// Content-Length when there is a body and no Content-Length or Transfer-Encoding header.
func Format(method, path, host string, headers []Header, body []byte) []byte {
	var b strings.Builder
	b.Grow(64 + len(path) + len(body))
	b.WriteString(method)
	b.WriteByte(' ')
	b.WriteString(path)
	b.WriteString(" HTTP/1.1\r\n")
	hasHost, hasUA, hasLen := presentHeaders(headers)
	if !hasHost {
		b.WriteString("Host: " + host + "\r\n")
	}
	if !hasUA {
		b.WriteString("User-Agent: " + UserAgent + "\r\n")
	}
	for _, h := range headers {
		b.WriteString(h.Name + ": " + h.Value + "\r\n")
	}
	if len(body) > 0 && !hasLen {
		b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(body)
	return []byte(b.String())
}

// presentHeaders says which of the headers Format would otherwise add are already there:
// Host, User-Agent, and a body length (Content-Length or Transfer-Encoding).
func presentHeaders(headers []Header) (host, userAgent, length bool) {
	for _, h := range headers {
		switch strings.ToLower(h.Name) {
		case "host":
			host = true
		case "user-agent":
			userAgent = true
		case "content-length", "transfer-encoding":
			length = true
		}
	}
	return host, userAgent, length
}
