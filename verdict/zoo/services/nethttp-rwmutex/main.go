// Command nethttp-rwmutex is a price-list service on plain net/http, its handlers methods on
// a struct: the price list is cached behind a sync.RWMutex and must be at most 5 ms old.
// A reader that finds it stale takes the write lock and reloads it from the catalogue
// service (a slow downstream, 5 ms), without checking again whether another reader already
// did. The list is stamped with the time it was asked for, so it is already 5 ms old when
// it arrives: every request reloads, one at a time. The one bottleneck is that lock.
package main

import (
	"encoding/json"
	"log"
	"net/http"
	_ "net/http/pprof"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

const maxAge = 5 * time.Millisecond

type priceList struct {
	source string

	mu     sync.RWMutex
	prices map[string]float64
	loaded time.Time
}

func (p *priceList) reload() error {
	asOf := time.Now() // the prices are as of the request for them
	resp, err := http.Get(p.source + "/prices?delay=5ms")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var fresh map[string]float64
	if err := json.NewDecoder(resp.Body).Decode(&fresh); err != nil {
		return err
	}
	p.prices, p.loaded = fresh, asOf
	return nil
}

func (p *priceList) lookup(w http.ResponseWriter, r *http.Request) {
	p.mu.RLock()
	stale := time.Since(p.loaded) > maxAge
	p.mu.RUnlock()
	if stale {
		p.mu.Lock()
		err := p.reload()
		p.mu.Unlock()
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
	}
	p.mu.RLock()
	price, ok := p.prices[r.URL.Query().Get("sku")]
	p.mu.RUnlock()
	json.NewEncoder(w).Encode(map[string]any{"price": price, "known": ok})
}

func main() {
	p := &priceList{source: svc.Env("DOWNSTREAM_URL")}
	mux := http.NewServeMux()
	mux.Handle("/debug/pprof/", http.DefaultServeMux)
	mux.Handle("/metrics", promhttp.Handler())
	mux.HandleFunc("/price", p.lookup)
	log.Fatal(http.Serve(svc.Listen(), mux))
}
