// Command mux-regexp is a request gate on gorilla/mux, its handlers methods on a struct,
// behind two middlewares of the net/http kind (a logger and an API-key check, each a
// func(http.Handler) http.Handler). Every request compiles the gate's rules, thirty
// regular expressions, before matching the path against them: the patterns never change,
// and compiling them once at start would do. That per-request compilation is its one
// bottleneck.
package main

import (
	"fmt"
	"log"
	"net/http"
	_ "net/http/pprof"
	"regexp"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

type gate struct {
	patterns []string
	served   int
}

// rules compiles the gate's patterns (on every call: the bottleneck).
func (g *gate) rules() []*regexp.Regexp {
	out := make([]*regexp.Regexp, 0, len(g.patterns))
	for _, p := range g.patterns {
		out = append(out, regexp.MustCompile(p))
	}
	return out
}

func (g *gate) check(w http.ResponseWriter, r *http.Request) {
	path := mux.Vars(r)["path"]
	for _, re := range g.rules() {
		if re.MatchString(path) {
			http.Error(w, "blocked by "+re.String(), http.StatusForbidden)
			return
		}
	}
	fmt.Fprintf(w, "{\"path\":%q,\"allowed\":true}\n", path)
}

// logged counts requests and their time, as a metrics middleware would.
func logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		next.ServeHTTP(w, r)
		_ = time.Since(start)
	})
}

// withKey stands for an API-key check.
func withKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") == "revoked" {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func main() {
	g := &gate{}
	for i := range 30 {
		g.patterns = append(g.patterns, fmt.Sprintf(`^/(admin|internal|debug)-%d/[a-z]+(\.php|\.asp)?(\?.*)?$|(?i)select\s+.*from\s+t%d`, i, i))
	}
	r := mux.NewRouter()
	r.Handle("/metrics", promhttp.Handler())
	r.PathPrefix("/debug/pprof/").Handler(http.DefaultServeMux)
	api := r.PathPrefix("/").Subrouter()
	api.Use(logged, withKey)
	api.HandleFunc("/check/{path}", g.check)
	log.Fatal(http.Serve(svc.Listen(), r))
}
