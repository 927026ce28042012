package profcap

import (
	"bytes"
	"fmt"
	"net/netip"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apiperf/apiperf/procfs"
	"github.com/google/pprof/profile"
)

//go:noinline
func apiperfTestWaitMutex(mu *sync.Mutex, wg *sync.WaitGroup) {
	wg.Done()
	mu.Lock()
	mu.Unlock()
}

//go:noinline
func apiperfTestWaitChan(ch chan struct{}, wg *sync.WaitGroup) {
	wg.Done()
	<-ch
}

func TestWaitSites(t *testing.T) {
	var mu sync.Mutex
	mu.Lock()
	ch := make(chan struct{})
	var started, done sync.WaitGroup
	for i := range 30 {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			if i < 20 {
				apiperfTestWaitMutex(&mu, &started)
			} else {
				apiperfTestWaitChan(ch, &started)
			}
		}()
	}
	started.Wait()
	time.Sleep(20 * time.Millisecond) // let them park
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	mu.Unlock()
	close(ch)
	done.Wait()
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	w := WaitSites(p, 5)
	if w.Total < 30 {
		t.Fatalf("WaitSites: total %d, want at least 30", w.Total)
	}
	want := map[string]struct {
		count  int64
		reason string
	}{
		"sync.Mutex: waiting for the lock from github.com/apiperf/apiperf/profcap.apiperfTestWaitMutex": {20, "mutex"},
		"a channel receive in github.com/apiperf/apiperf/profcap.apiperfTestWaitChan":                   {10, "channel receive"},
	}
	found := 0
	for _, s := range w.Sites {
		if wnt, ok := want[s.Site()]; ok {
			found++
			if s.Count != wnt.count || s.Reason != wnt.reason {
				t.Errorf("site %s: count %d reason %q, want %d %q", s.Site(), s.Count, s.Reason, wnt.count, wnt.reason)
			}
		}
	}
	if found != len(want) {
		t.Errorf("WaitSites = %+v, want sites %v", w.Sites, want)
	}
	runtime.KeepAlive(&mu)
}

func TestIsStd(t *testing.T) {
	for fn, want := range map[string]bool{
		"sync.(*Mutex).Lock":             true,
		"database/sql.(*DB).conn":        true,
		"main.handler":                   false,
		"github.com/x/y.(*T).Get":        false,
		"example.com/svc.handler":        false,
		"net/http.HandlerFunc.ServeHTTP": true,
	} {
		if got := isStd(fn); got != want {
			t.Errorf("isStd(%q) = %v, want %v", fn, got, want)
		}
	}
}

// A request goroutine reading a driver's answer waits for that downstream, named with its
// kind and, located among the target's outbound connections, its address; the same shape
// with an unknown client is a downstream by shape; the server reading a request's body is
// not a downstream.
func TestDownstreamWaits(t *testing.T) {
	server := []string{"net/http.HandlerFunc.ServeHTTP", "net/http.serverHandler.ServeHTTP", "net/http.(*conn).serve"}
	read := []string{"runtime.gopark", "runtime.netpollblock", "internal/poll.runtime_pollWait", "internal/poll.(*pollDesc).wait",
		"internal/poll.(*FD).Read", "net.(*netFD).Read", "net.(*conn).Read"}
	stk := func(fs ...string) []string { return append(append(slices.Clone(read), fs...), server...) }
	p := synthProfile([][]string{
		stk("bufio.(*Reader).Read", "github.com/go-sql-driver/mysql.(*buffer).fill", "github.com/go-sql-driver/mysql.(*mysqlConn).readPacket",
			"database/sql.(*DB).queryDC", "gorm.io/gorm.(*DB).Take", "main.(*store).find", "main.handler"),
		stk("bufio.(*Reader).Read", "example.com/acme/rpcclient.(*Client).Call", "main.quote"),
		stk("bufio.(*Reader).Read", "net/http.(*connReader).Read", "net/http.(*body).Read", "encoding/json.(*Decoder).Decode", "main.upload"),
		append([]string{"runtime.gopark", "runtime.selectgo", "net/http.(*persistConn).roundTrip", "net/http.(*Transport).roundTrip",
			"net/http.(*Client).Do", "main.(*orders).allowed", "main.(*orders).create"}, server...),
		append([]string{"runtime.gopark", "runtime.semacquire1", "internal/sync.runtime_SemacquireMutex", "internal/sync.(*Mutex).lockSlow",
			"internal/sync.(*Mutex).Lock", "sync.(*Mutex).Lock", "github.com/sirupsen/logrus.(*MutexWrap).Lock", "github.com/sirupsen/logrus.(*Entry).log",
			"github.com/sirupsen/logrus.(*Entry).Info", "main.checkout"}, server...),
	}, []int64{20, 5, 3, 4, 2})
	w := WaitSites(p, 0)
	peers := []procfs.Peer{{Addr: netip.MustParseAddrPort("127.0.0.1:3306"), Conns: 8, PIDs: []int{4242}, Command: "mariadbd", CPUCores: 1.9},
		{Addr: netip.MustParseAddrPort("127.0.0.1:9001"), Conns: 2}}
	var got []string
	for _, s := range w.Sites {
		s.Locate(peers)
		got = append(got, fmt.Sprintf("%d %s [%s]", s.Count, s.Site(), s.Reason))
	}
	want := []string{
		"20 MySQL/MariaDB (go-sql-driver/mysql) at 127.0.0.1:3306 (mariadbd, 1.90 cores): waiting for its answer from main.(*store).find [downstream]",
		"5 a downstream (read by example.com/acme) at 127.0.0.1:9001: waiting for its answer from main.quote [downstream]",
		"4 http.Transport at 127.0.0.1:9001: waiting for the downstream's response from main.(*orders).allowed [downstream]",
		"3 network or file I/O from main.upload [I/O]",
		"2 sync.Mutex of github.com/sirupsen/logrus: waiting for the lock from main.checkout [mutex]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("sites:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
