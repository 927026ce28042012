// Command nethttp-logrus is a checkout service on plain net/http, its handlers closures in
// main, that logs each step of a request with logrus to stdout (a pipe, as under a process
// supervisor or a container runtime): twenty lines with their fields per request, each
// formatted and written (a write system call) under its logger's lock. Its one bottleneck
// is that logging: most of its CPU goes to formatting and writing lines, and when the
// pipe's reader falls behind the requests queue for the logger's lock too.
package main

import (
	"encoding/json"
	"log"
	"net/http"
	_ "net/http/pprof"
	"os"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sirupsen/logrus"

	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

func main() {
	logger := logrus.New()
	logger.SetOutput(os.Stdout)
	logger.SetFormatter(&logrus.TextFormatter{DisableColors: true, FullTimestamp: true})
	http.Handle("/metrics", promhttp.Handler())
	http.HandleFunc("/checkout", func(w http.ResponseWriter, r *http.Request) {
		entry := logger.WithFields(logrus.Fields{"path": r.URL.Path, "remote": r.RemoteAddr, "agent": r.UserAgent(), "cart": 7})
		for step := range 20 {
			entry.WithField("step", step).Info("checkout step done: the basket was validated, priced, reserved and recorded")
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"order": 7, "status": "placed"})
	})
	log.Fatal(http.Serve(svc.Listen(), nil))
}
