// Command nethttp-ratelimit is a search service on plain net/http, its handlers closures in
// main, that admits requests through one golang.org/x/time/rate limiter of 150 a second
// (burst 1) before a small, cheap answer. Its one bottleneck is the limiter.
package main

import (
	"encoding/json"
	"log"
	"net/http"
	_ "net/http/pprof"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/time/rate"

	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

func main() {
	limiter := rate.NewLimiter(150, 1)
	http.Handle("/metrics", promhttp.Handler())
	http.HandleFunc("/search", func(w http.ResponseWriter, r *http.Request) {
		if err := limiter.Wait(r.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"q": r.URL.Query().Get("q"), "hits": []int{3, 5, 8}})
	})
	log.Fatal(http.Serve(svc.Listen(), nil))
}
