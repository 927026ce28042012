package profcap

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// maxCmdlineBytes bounds what FetchCmdline reads: a command line, not a page.
const maxCmdlineBytes = 64 << 10

// FetchCmdline gets the target's command line from its net/http/pprof base URL
// (base/cmdline: the arguments separated by NUL bytes), within timeout.
func FetchCmdline(ctx context.Context, base string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/cmdline", nil)
	if err != nil {
		return nil, fmt.Errorf("fetching the cmdline: %w", err)
	}
	resp, err := Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the cmdline: %w", unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxCmdlineBytes))
	if err != nil {
		return nil, fmt.Errorf("fetching the cmdline: %w", err)
	}
	if resp.StatusCode != http.StatusOK || looksLikeHTML(body) {
		return nil, fmt.Errorf("fetching the cmdline: %s, not a command line", resp.Status)
	}
	return body, nil
}
