package scenario

import (
	"fmt"
	"strconv"
	"strings"
)

// checkLength refuses headers that contradict the body apiperf sends: a Content-Length
// other than the body's length (the target would wait for bytes that never come, or read
// the next request as body), or a chunked Transfer-Encoding over a body that is not chunked.
func checkLength(headers []Header, body string) error {
	for _, h := range headers {
		switch strings.ToLower(h.Name) {
		case "content-length":
			n, err := strconv.ParseInt(strings.TrimSpace(h.Value), 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("header %q: Content-Length must be a byte count", h.Name+": "+h.Value)
			}
			if n != int64(len(body)) {
				return fmt.Errorf("header %q contradicts the body of %d bytes (apiperf sets Content-Length itself; drop the header)", h.Name+": "+h.Value, len(body))
			}
		case "transfer-encoding":
			if strings.Contains(strings.ToLower(h.Value), "chunked") && !strings.HasSuffix(body, "0\r\n\r\n") {
				return fmt.Errorf("header %q: the body is not chunked (it must end with the last chunk 0\\r\\n\\r\\n); drop the header", h.Name+": "+h.Value)
			}
		}
	}
	return nil
}
