package measure

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// GRPC is what only a gRPC step has: the method called and the response messages received.
// Its Status counts are gRPC status codes (0 OK ... 16 UNAUTHENTICATED), from the
// grpc-status trailer (or the headers of a trailers-only response); a response without
// grpc-status keeps its HTTP status (a proxy's 503 stays 503).
type GRPC struct {
	Method       string `json:"method"`        // /package.Service/Method
	Messages     int64  `json:"messages"`      // response messages received
	MessageBytes int64  `json:"message_bytes"` // their payload bytes, without the 5-byte gRPC prefix
}

// Merge adds o's counts to g; either may be nil.
func (g *GRPC) Merge(o *GRPC) *GRPC {
	if o == nil {
		return g
	}
	if g == nil {
		g = &GRPC{Method: o.Method}
	}
	g.Messages += o.Messages
	g.MessageBytes += o.MessageBytes
	return g
}

// String describes the messages in one line, e.g. "/pkg.Svc/Echo: 1000 response messages, 12 B each on average".
func (g *GRPC) String() string {
	avg := 0.0
	if g.Messages > 0 {
		avg = float64(g.MessageBytes) / float64(g.Messages)
	}
	return fmt.Sprintf("%s: %d response messages, %.0f B each on average", g.Method, g.Messages, avg)
}

// grpcCodes are the gRPC status code names, by number.
var grpcCodes = [...]string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
	"OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

// GRPCCodeName is the name of gRPC status code c ("UNAVAILABLE"); a code without a name, or
// an HTTP status (100 and above), is its number.
func GRPCCodeName(c int) string {
	if c >= 0 && c < len(grpcCodes) {
		return grpcCodes[c]
	}
	return strconv.Itoa(c)
}

// ParseGRPCCode reads a gRPC status code by name (any case, "DEADLINE_EXCEEDED" or
// "DeadlineExceeded") or by number (0-99).
func ParseGRPCCode(s string) (int, bool) {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		return n, n >= 0 && n < 100
	}
	flat := strings.ToUpper(strings.ReplaceAll(s, "_", ""))
	for i, name := range grpcCodes {
		if flat == strings.ReplaceAll(name, "_", "") {
			return i, true
		}
	}
	return 0, false
}

// GRPCStatusLine lists gRPC status counts by name in code order, e.g. "OK=900, UNAVAILABLE=100".
func GRPCStatusLine(m map[int]int64) string {
	codes := make([]int, 0, len(m))
	for c := range m {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%s=%d", GRPCCodeName(c), m[c])
	}
	return strings.Join(parts, ", ")
}
