// Command nethttp-healthy is a small profile service on plain net/http, its handlers
// closures in main: each request encodes a small JSON document. Swept at low rates, nothing
// limits it.
package main

import (
	"encoding/json"
	"log"
	"net/http"
	_ "net/http/pprof"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

func main() {
	http.Handle("/metrics", promhttp.Handler())
	http.HandleFunc("/profile", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": 7, "name": "Ada", "roles": []string{"admin", "dev"}})
	})
	log.Fatal(http.Serve(svc.Listen(), nil))
}
