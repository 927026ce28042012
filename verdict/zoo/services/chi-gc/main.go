// Command chi-gc is a feed service on chi, its handlers closures in main: every request
// builds the feed as 10,000 items (50,000 small heap objects) linked by pointers, walks it
// once and throws it away. Its one bottleneck is the garbage: allocation and the
// collector's work.
package main

import (
	"fmt"
	"log"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

type item struct {
	id     int
	title  string
	score  float64
	author *author
	next   *item
}

type author struct {
	name      string
	followers []int
}

// buildFeed links n items, each with its own author, the way an ORM hydrates rows.
func buildFeed(n int) *item {
	var head *item
	for i := range n {
		a := &author{name: fmt.Sprint("author-", i%500), followers: make([]int, 4)}
		head = &item{id: i, title: fmt.Sprint("post ", i), score: float64(i%100) / 10, author: a, next: head}
	}
	return head
}

func main() {
	r := chi.NewRouter()
	r.Use(middleware.Recoverer)
	r.Mount("/debug", middleware.Profiler())
	r.Handle("/metrics", promhttp.Handler())
	r.Get("/feed", func(w http.ResponseWriter, r *http.Request) {
		var total float64
		var n int
		for it := buildFeed(10_000); it != nil; it = it.next {
			total += it.score
			n++
		}
		fmt.Fprintf(w, `{"items":%d,"score":%.1f}`+"\n", n, total)
	})
	log.Fatal(http.Serve(svc.Listen(), r))
}
