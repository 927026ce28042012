// Command target is a server with known behaviour for the execution trace tests: /alloc
// allocates a fixed 64 KiB per request over a fixed 8 MiB live heap, /cpu burns CPU inside
// a task and a region, /block waits on a channel fed once per millisecond. It serves
// net/http/pprof and prints "listening on http://ADDR" when ready. Loopback only.
package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime/trace"
	"time"
)

// ballast is the live heap the GC's arithmetic works on: 8 MiB without pointers.
var ballast = make([]byte, 8<<20)

// sink keeps the last allocation reachable so it is not optimized away.
var sink []byte

//go:noinline
func alloc() []byte {
	b := make([]byte, 64<<10)
	b[len(b)-1] = 1
	return b
}

func burn(n int) [32]byte {
	var h [32]byte
	for range n {
		h = sha256.Sum256(h[:])
	}
	return h
}

// tokens is fed once per millisecond; waitForToken blocks on it.
var tokens = make(chan struct{})

func waitForToken(w http.ResponseWriter, r *http.Request) {
	<-tokens
	fmt.Fprintln(w, "ok")
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	flag.Parse()
	go func() {
		for range time.Tick(time.Millisecond) {
			select {
			case tokens <- struct{}{}:
			default:
			}
		}
	}()
	http.HandleFunc("/alloc", func(w http.ResponseWriter, r *http.Request) {
		sink = alloc()
		fmt.Fprintln(w, len(sink), len(ballast))
	})
	http.HandleFunc("/cpu", func(w http.ResponseWriter, r *http.Request) {
		ctx, task := trace.NewTask(r.Context(), "cpu-request")
		var h [32]byte
		trace.WithRegion(ctx, "burn", func() { h = burn(20000) })
		task.End()
		fmt.Fprintf(w, "%x\n", h[:4])
	})
	http.HandleFunc("/block", waitForToken)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stdout, "listening on http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, nil))
}
