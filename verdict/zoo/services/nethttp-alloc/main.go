// Command nethttp-alloc is a report service on plain net/http, its handlers closures in
// main, behind a middleware chain of the net/http kind (a request id and a timer). Each
// report builds 4,000 small row structs, each with its own strings and a slice of tags,
// to sum three numbers: its one bottleneck is the allocation (and the collector's work it
// makes), not the arithmetic.
package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	_ "net/http/pprof"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

type row struct {
	ID     string
	Region string
	Tags   []string
	Amount *float64
}

// buildRows allocates the report's rows, one by one (the bottleneck).
func buildRows(n int) []*row {
	rows := make([]*row, 0, 16)
	for i := range n {
		amount := float64(i%97) * 1.5
		rows = append(rows, &row{
			ID:     "row-" + strconv.Itoa(i),
			Region: "eu-" + strconv.Itoa(i%7),
			Tags:   []string{"t" + strconv.Itoa(i%3), "t" + strconv.Itoa(i%5)},
			Amount: &amount,
		})
	}
	return rows
}

type ctxKey struct{}

func withRequestID(next http.Handler) http.Handler {
	var n int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, n)))
	})
}

func timed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		next.ServeHTTP(w, r)
		w.Header().Set("X-Elapsed", time.Since(start).String())
	})
}

func main() {
	api := http.NewServeMux()
	api.HandleFunc("/report", func(w http.ResponseWriter, r *http.Request) {
		var total float64
		for _, rw := range buildRows(4000) {
			total += *rw.Amount
		}
		fmt.Fprintf(w, "{\"total\":%.1f}\n", total)
	})
	http.Handle("/metrics", promhttp.Handler())
	http.Handle("/report", withRequestID(timed(api)))
	log.Fatal(http.Serve(svc.Listen(), nil))
}
