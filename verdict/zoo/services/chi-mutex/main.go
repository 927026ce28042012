// Command chi-mutex is a ledger service on chi, its handlers closures in main: every
// request takes one global sync.Mutex and, holding it, records the entry with the audit
// service (a slow downstream, 5 ms) so that entries are numbered in order. The audit
// service serves any number at once; the one bottleneck is the lock held across the call.
// It turns on the block and mutex profiles, as services that care about contention do.
package main

import (
	"fmt"
	"log"
	"net/http"
	"runtime"
	"sync"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

var (
	mu   sync.Mutex
	next int64
)

func main() {
	runtime.SetMutexProfileFraction(5)
	runtime.SetBlockProfileRate(100_000) // one blocking event sampled per 100 us blocked
	audit := svc.Env("DOWNSTREAM_URL") + "/audit?delay=5ms"

	r := chi.NewRouter()
	r.Use(middleware.Recoverer)
	r.Mount("/debug", middleware.Profiler())
	r.Handle("/metrics", promhttp.Handler())
	r.Post("/entries", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		next++
		resp, err := http.Post(fmt.Sprintf("%s&seq=%d", audit, next), "application/json", r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		resp.Body.Close()
		fmt.Fprintf(w, `{"seq":%d}`+"\n", next)
	})
	r.Get("/entries", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, `{"last":%d}`+"\n", next)
	})
	log.Fatal(http.Serve(svc.Listen(), r))
}
