// Command nethttp-rpc is an order service on plain net/http, its handlers methods on a
// struct, that asks a permissions service over HTTP on every request whether the caller's
// address may order (the permissions change once a day: a cache would answer nearly all of
// them). The permissions service answers one request at a time in about 5 ms. Its one
// bottleneck is that per-request call.
package main

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	_ "net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

type orders struct {
	client      *http.Client
	permissions string
}

// allowed asks the permissions service about the caller (on every request: the bottleneck).
func (o *orders) allowed(r *http.Request) (bool, error) {
	req, err := http.NewRequestWithContext(r.Context(), "GET", o.permissions+"/serial?delay=5ms&ip="+r.RemoteAddr, nil)
	if err != nil {
		return false, err
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusOK, err
}

func (o *orders) create(w http.ResponseWriter, r *http.Request) {
	ok, err := o.allowed(r)
	switch {
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	case !ok:
		http.Error(w, "not allowed", http.StatusForbidden)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"order": 42, "status": "created"})
}

func main() {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	o := &orders{client: &http.Client{Transport: tr, Timeout: 10 * time.Second}, permissions: svc.Env("DOWNSTREAM_URL")}
	http.Handle("/metrics", promhttp.Handler())
	http.HandleFunc("/orders", o.create)
	log.Fatal(http.Serve(svc.Listen(), nil))
}
