package live

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLiveServerGuard: 50 scrapers in a loop get at most the capped share (the rest are
// turned away at once), every answer says nosniff, a foreign Host is refused on loopback,
// and an idle keep-alive connection is closed.
func TestLiveServerGuard(t *testing.T) {
	defer func(d time.Duration) { serveIdle = d }(serveIdle)
	serveIdle = 300 * time.Millisecond
	s, err := Start(Config{Listen: "127.0.0.1:0", Kind: "run", Target: "http://127.0.0.1:9/"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	base := "http://" + s.Addr()

	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Host = "attacker.example:80"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GET /metrics with Host attacker.example = %d (nosniff %q), want 421 with nosniff", resp.StatusCode, resp.Header.Get("X-Content-Type-Options"))
	}
	time.Sleep(time.Second) // a full bucket

	var served, turned, other atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(time.Second)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Timeout: 2 * time.Second}
			for time.Now().Before(stop) {
				resp, err := c.Get(base + "/metrics")
				if err != nil {
					other.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch {
				case resp.Header.Get("X-Content-Type-Options") != "nosniff":
					other.Add(1)
				case resp.StatusCode == 200:
					served.Add(1)
				case resp.StatusCode == 429 || resp.StatusCode == 503:
					turned.Add(1)
				default:
					other.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	// One second of a bucket of 20 refilled at 20/s: at most about 40 rendered.
	if served.Load() > 2*serveRate+5 || served.Load() == 0 || turned.Load() == 0 || other.Load() != 0 {
		t.Errorf("50 scrapers for 1s: %d served, %d turned away, %d other; want at most about %d served, the rest turned away, every answer nosniff",
			served.Load(), turned.Load(), other.Load(), 2*serveRate)
	}
	t.Logf("50 scrapers for 1s: %d served, %d turned away", served.Load(), turned.Load())

	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	time.Sleep(time.Second) // tokens again
	io.WriteString(nc, "GET /live.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	begin := time.Now()
	n, _ := io.Copy(io.Discard, nc) // the response, then the close when idle
	// Under the 5 s read deadline: closed by the server, not timed out here.
	if took := time.Since(begin); n == 0 || took > 4500*time.Millisecond {
		t.Errorf("an idle keep-alive connection got %d bytes and stayed open %v, want closed after %v idle", n, took, serveIdle)
	}
}
