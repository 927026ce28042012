// Command nethttp-chansem is a rendering service on plain net/http, its handlers methods on
// a struct: a buffered channel of four slots limits how many renders run at once, and each
// render asks the template service (a slow downstream, 10 ms). The template service serves
// any number at once; the one bottleneck is the four slots.
package main

import (
	"io"
	"log"
	"net/http"
	_ "net/http/pprof"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

type renderer struct {
	templates string
	slots     chan struct{}
}

func (rd *renderer) render(w http.ResponseWriter, r *http.Request) {
	rd.slots <- struct{}{}
	defer func() { <-rd.slots }()
	resp, err := http.Get(rd.templates + "/template?delay=10ms&name=" + r.URL.Query().Get("page"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", "text/html")
	io.Copy(w, resp.Body)
}

func main() {
	rd := &renderer{templates: svc.Env("DOWNSTREAM_URL"), slots: make(chan struct{}, 4)}
	mux := http.NewServeMux()
	mux.Handle("/debug/pprof/", http.DefaultServeMux)
	mux.Handle("/metrics", promhttp.Handler())
	mux.HandleFunc("/render", rd.render)
	log.Fatal(http.Serve(svc.Listen(), mux))
}
