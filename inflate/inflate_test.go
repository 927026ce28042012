package inflate

import (
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/internal/testenv"
)

// TestGzipBounded: what a gzip stream expands to is bounded, whatever its compressed size.
func TestGzipBounded(t *testing.T) {
	small := testenv.GzipBomb(2, 1000)
	cases := []struct {
		name  string
		in    []byte
		limit int64
		want  int  // bytes returned
		large bool // refused as too large
	}{
		{"two members within the limit are read whole", small, 2000, 2000, false},
		{"exactly the limit is accepted", small, 2000, 2000, false},
		{"one byte over is refused", small, 1999, 0, true},
		{"a bomb of 48 members of 1 MiB is refused at 1 MiB", testenv.GzipBomb(48, 1<<20), 1 << 20, 0, true},
	}
	for _, c := range cases {
		got, err := Gzip(c.in, c.limit)
		if c.large {
			if !IsTooLarge(err) || !strings.Contains(err.Error(), "limit") {
				t.Errorf("%s: Gzip(%d bytes, %d) = %d bytes, %v; want a too-large error", c.name, len(c.in), c.limit, len(got), err)
			}
			continue
		}
		if err != nil || len(got) != c.want {
			t.Errorf("%s: Gzip(%d bytes, %d) = %d bytes, %v; want %d", c.name, len(c.in), c.limit, len(got), err, c.want)
		}
	}
	if _, err := Gzip([]byte("not gzip"), 10); err == nil || IsTooLarge(err) {
		t.Errorf("Gzip(not gzip) = %v, want a format error", err)
	}
}

// TestReaderStopsAtLimit: the bounded reader reads no further than one byte past its limit.
func TestReaderStopsAtLimit(t *testing.T) {
	src := strings.NewReader(strings.Repeat("x", 100))
	r := NewReader(src, 10)
	b, err := io.ReadAll(r)
	if !IsTooLarge(err) || !r.Over() || len(b) != 10 || src.Len() != 89 {
		t.Errorf("ReadAll(100 bytes, limit 10) = %d bytes, %v, over %v, %d left unread; want 10, too large, 89 unread", len(b), err, r.Over(), src.Len())
	}
	b, err = ReadAll(strings.NewReader("0123456789"), 10)
	if err != nil || string(b) != "0123456789" {
		t.Errorf("ReadAll(10 bytes, limit 10) = %q, %v; want all of it", b, err)
	}
}

// TestMemoryBounded: decompressing a bomb of 128 MiB with a 1 MiB limit allocates about the
// limit, not the bomb.
func TestMemoryBounded(t *testing.T) {
	in := testenv.GzipBomb(128, 1<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := Gzip(in, 1<<20); !IsTooLarge(err) {
		t.Fatalf("Gzip(128 MiB bomb, 1 MiB) = %v, want too large", err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("Gzip(128 MiB bomb, 1 MiB) allocated %d MiB, want a few", got>>20)
	}
}
