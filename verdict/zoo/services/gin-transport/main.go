// Command gin-transport is a quotes service on gin, its handlers methods on a struct: every
// request asks a pricing service (a slow downstream, 10 ms) through an http.Transport that
// allows at most four connections to it. The downstream serves any number at once; the one
// bottleneck is MaxConnsPerHost.
package main

import (
	"encoding/json"
	"log"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/apiperf/apiperf/verdict/zoo/internal/ginsvc"
	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

type quotes struct {
	pricing string
	client  *http.Client
}

func (q *quotes) price(c *gin.Context) {
	req, err := http.NewRequestWithContext(c.Request.Context(), http.MethodGet, q.pricing+"/price?delay=10ms&sku="+c.Param("sku"), nil)
	if err != nil {
		c.AbortWithStatus(http.StatusInternalServerError)
		return
	}
	resp, err := q.client.Do(req)
	if err != nil {
		c.AbortWithStatusJSON(http.StatusBadGateway, gin.H{"error": err.Error()})
		return
	}
	defer resp.Body.Close()
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	c.JSON(http.StatusOK, gin.H{"sku": c.Param("sku"), "pricing": body})
}

func main() {
	q := &quotes{
		pricing: svc.Env("DOWNSTREAM_URL"),
		client: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
			MaxConnsPerHost: 4, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second,
		}},
	}
	r := ginsvc.New()
	r.GET("/quotes/:sku", q.price)
	log.Fatal(r.RunListener(svc.Listen()))
}
