// Command gin-xsem is a thumbnail service on gin, its handlers closures in main: a weighted
// semaphore (golang.org/x/sync/semaphore) of four lets four thumbnails be fetched from the
// image store (a slow downstream, 10 ms) at once. The store serves any number at once; the
// one bottleneck is the semaphore's weight.
package main

import (
	"io"
	"log"
	"net/http"

	"github.com/gin-gonic/gin"
	"golang.org/x/sync/semaphore"

	"github.com/apiperf/apiperf/verdict/zoo/internal/ginsvc"
	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

func main() {
	store := svc.Env("DOWNSTREAM_URL")
	fetches := semaphore.NewWeighted(4)
	r := ginsvc.New()
	r.GET("/thumbs/:id", func(c *gin.Context) {
		if err := fetches.Acquire(c.Request.Context(), 1); err != nil {
			c.AbortWithStatus(http.StatusServiceUnavailable)
			return
		}
		defer fetches.Release(1)
		resp, err := http.Get(store + "/image?delay=10ms&id=" + c.Param("id"))
		if err != nil {
			c.AbortWithStatusJSON(http.StatusBadGateway, gin.H{"error": err.Error()})
			return
		}
		defer resp.Body.Close()
		c.Status(http.StatusOK)
		c.Header("Content-Type", "image/png")
		io.Copy(c.Writer, resp.Body)
	})
	log.Fatal(r.RunListener(svc.Listen()))
}
