// Package browsertest opens apiperf's HTML reports in headless Chromium for tests: it
// records console errors and every network request, and takes screenshots of elements.
// Tests skip when Chromium is absent, unless the CI environment variable is set, in which
// case a missing Chromium fails the test.
package browsertest

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Timeout bounds everything one page does, from starting Chromium to the last query.
const Timeout = 60 * time.Second

// Candidates are the Chromium executables looked for, in order, after $CHROMIUM.
var Candidates = []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"}

// Find returns the path of a Chromium executable, or "" when there is none.
func Find() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, c := range Candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	return ""
}

// Page is one HTML file loaded in headless Chromium.
type Page struct {
	ctx context.Context

	mu       sync.Mutex
	errors   []string
	requests []string
}

// Open loads the HTML file at path through a file:// URL in a fresh headless Chromium and
// waits until it has loaded. It skips t when Chromium is absent and $CI is unset, and fails
// it when $CI is set. Chromium is stopped when the test ends.
func Open(t testing.TB, path string) *Page {
	t.Helper()
	exe := Find()
	if exe == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but no Chromium was found (looked for $CHROMIUM, %s); install Debian's chromium package", strings.Join(Candidates, ", "))
		}
		t.Skipf("skipping: no Chromium found (looked for $CHROMIUM, %s); `apt-get install chromium` to run this test", strings.Join(Candidates, ", "))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return open(t, exe, "file://"+filepath.ToSlash(abs))
}

// OpenURL is Open for a page served over HTTP (a loopback address, in tests).
func OpenURL(t testing.TB, url string) *Page {
	t.Helper()
	exe := Find()
	if exe == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but no Chromium was found (looked for $CHROMIUM, %s); install Debian's chromium package", strings.Join(Candidates, ", "))
		}
		t.Skipf("skipping: no Chromium found (looked for $CHROMIUM, %s); `apt-get install chromium` to run this test", strings.Join(Candidates, ", "))
	}
	return open(t, exe, url)
}

func open(t testing.TB, exe, url string) *Page {
	t.Helper()
	// Not t.TempDir: Chromium's helper processes may still write the profile for a moment
	// after the browser is gone, which would fail TempDir's cleanup.
	profile, err := os.MkdirTemp("", "apiperf-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1200, 900),
	}
	base, cancelTimeout := context.WithTimeout(context.Background(), Timeout)
	alloc, cancelAlloc := chromedp.NewExecAllocator(base, opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
		cancelTimeout()
		for i := 0; i < 20 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
	})
	p := &Page{ctx: ctx}
	chromedp.ListenTarget(ctx, p.listen)
	if err := chromedp.Run(ctx, network.Enable(), log.Enable(), runtime.Enable(), chromedp.Navigate(url),
		chromedp.WaitReady("body", chromedp.ByQuery)); err != nil {
		t.Fatalf("opening %s in %s: %v", url, exe, err)
	}
	// Let images decode and late console messages arrive.
	if err := chromedp.Run(ctx, chromedp.Poll(`Array.from(document.images).every(i => i.complete)`, nil, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("waiting for the images of %s: %v", url, err)
	}
	time.Sleep(200 * time.Millisecond)
	return p
}

func (p *Page) listen(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, strings.TrimSpace(string(a.Value)+" "+a.Description))
			}
			p.errors = append(p.errors, "console."+string(ev.Type)+": "+strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		p.errors = append(p.errors, "exception: "+ev.ExceptionDetails.Error())
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.LevelError {
			p.errors = append(p.errors, fmt.Sprintf("log (%s): %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
		}
	case *network.EventRequestWillBeSent:
		p.requests = append(p.requests, ev.Request.URL)
	case *network.EventLoadingFailed:
		p.errors = append(p.errors, "loading failed: "+ev.ErrorText)
	}
}

// ConsoleErrors lists console errors, uncaught exceptions, error log entries (blocked or
// failed loads, CSP violations) seen so far.
func (p *Page) ConsoleErrors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.errors...)
}

// Requests lists the URL of every request the page made, the page itself included.
func (p *Page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

// ExternalRequests lists requests to anything but file:// and data: URLs: an offline
// report makes none.
func (p *Page) ExternalRequests() []string {
	var out []string
	for _, u := range p.Requests() {
		if !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") {
			out = append(out, u)
		}
	}
	return out
}

// Text returns the rendered text of the first element matching the CSS selector.
func (p *Page) Text(t testing.TB, selector string) string {
	t.Helper()
	var s string
	if err := chromedp.Run(p.ctx, chromedp.Text(selector, &s, chromedp.ByQuery, chromedp.NodeVisible)); err != nil {
		t.Fatalf("reading the text of %q: %v", selector, err)
	}
	return s
}

// Eval evaluates a JavaScript expression in the page and stores its JSON result in out.
func (p *Page) Eval(t testing.TB, expr string, out any) {
	t.Helper()
	if err := chromedp.Run(p.ctx, chromedp.Evaluate(expr, out)); err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
}

// Screenshot returns an image of the first element matching the CSS selector, scrolled
// into view.
func (p *Page) Screenshot(t testing.TB, selector string) image.Image {
	t.Helper()
	var buf []byte
	if err := chromedp.Run(p.ctx, chromedp.ScrollIntoView(selector, chromedp.ByQuery), chromedp.Screenshot(selector, &buf, chromedp.ByQuery, chromedp.NodeVisible)); err != nil {
		t.Fatalf("screenshot of %q: %v", selector, err)
	}
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatalf("decoding the screenshot of %q: %v", selector, err)
	}
	return img
}

// Ink is the share (0..1) of an image's pixels that are not near-white, and the number of
// distinct colours among them (quantized): a drawn chart has both well above zero.
func Ink(img image.Image) (share float64, colours int) {
	b := img.Bounds()
	seen := map[uint32]bool{}
	var ink, all int
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			all++
			if r>>8 > 240 && g>>8 > 240 && bl>>8 > 240 {
				continue
			}
			ink++
			seen[(r>>12)<<8|(g>>12)<<4|bl>>12] = true
		}
	}
	if all == 0 {
		return 0, 0
	}
	return float64(ink) / float64(all), len(seen)
}
