package measure

import (
	"fmt"
	"sort"
	"strings"
)

// HTTP2 is what only an HTTP/2 step has: the protocol it ran on and the protocol's own
// events, counted. The attempts these events failed are also counted in Errors.
type HTTP2 struct {
	Protocol string `json:"protocol"` // "h2" (TLS, negotiated by ALPN) or "h2c" (cleartext, prior knowledge)
	Streams  int    `json:"streams"`  // concurrent streams per connection asked for (--streams)
	// MaxConcurrent is the smallest SETTINGS_MAX_CONCURRENT_STREAMS a server sent, when it was
	// below Streams (the limit was honoured: fewer streams were in flight than asked for).
	MaxConcurrent int              `json:"max_concurrent,omitempty"`
	GoAways       map[string]int64 `json:"goaways,omitempty"`     // GOAWAY frames received, by error code
	Retried       int64            `json:"retried,omitempty"`     // requests re-sent: above a GOAWAY's last stream (on a new connection), or REFUSED_STREAM
	Resets        map[string]int64 `json:"resets,omitempty"`      // RST_STREAM frames the server sent, by error code
	Cancelled     int64            `json:"cancelled,omitempty"`   // streams reset by the generator (timed out: RST_STREAM CANCEL)
	FlowStalls    int64            `json:"flow_stalls,omitempty"` // request bodies that had to wait for the server's flow-control window
}

// Merge adds o's counts to h; either may be nil.
func (h *HTTP2) Merge(o *HTTP2) *HTTP2 {
	if o == nil {
		return h
	}
	if h == nil {
		h = &HTTP2{Protocol: o.Protocol, Streams: o.Streams}
	}
	if o.MaxConcurrent > 0 && (h.MaxConcurrent == 0 || o.MaxConcurrent < h.MaxConcurrent) {
		h.MaxConcurrent = o.MaxConcurrent
	}
	h.GoAways = addCounts(h.GoAways, o.GoAways)
	h.Resets = addCounts(h.Resets, o.Resets)
	h.Retried += o.Retried
	h.Cancelled += o.Cancelled
	h.FlowStalls += o.FlowStalls
	return h
}

func addCounts(a, b map[string]int64) map[string]int64 {
	for k, v := range b {
		if a == nil {
			a = map[string]int64{}
		}
		a[k] += v
	}
	return a
}

// String describes the protocol and its events in one line, e.g.
// "HTTP/2 (h2c), 10 streams per connection; GOAWAY NO_ERROR 1; 3 retried (not processed by the server)".
func (h *HTTP2) String() string {
	if h == nil {
		return "HTTP/1.1"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/2 (%s), %d streams per connection", h.Protocol, h.Streams)
	if h.MaxConcurrent > 0 {
		fmt.Fprintf(&b, " (server allows %d: honoured)", h.MaxConcurrent)
	}
	if len(h.GoAways) > 0 {
		fmt.Fprintf(&b, "; GOAWAY %s", codeCounts(h.GoAways))
	}
	if h.Retried > 0 {
		fmt.Fprintf(&b, "; %d retried (not processed by the server)", h.Retried)
	}
	if len(h.Resets) > 0 {
		fmt.Fprintf(&b, "; RST_STREAM by server %s", codeCounts(h.Resets))
	}
	if h.Cancelled > 0 {
		fmt.Fprintf(&b, "; %d streams cancelled on timeout", h.Cancelled)
	}
	if h.FlowStalls > 0 {
		fmt.Fprintf(&b, "; %d request bodies stalled by flow control", h.FlowStalls)
	}
	return b.String()
}

func codeCounts(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
