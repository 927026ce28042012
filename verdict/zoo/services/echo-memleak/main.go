// Command echo-memleak is an upload-preview service on echo, its handlers closures in main:
// every request keeps a 16 KiB preview in a package-level map that is never pruned. Its one
// bottleneck is that leak: the heap grows with every request.
package main

import (
	"log"
	"net/http"
	_ "net/http/pprof"
	"sync"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

var (
	previewsMu sync.Mutex
	previews   = map[int][]byte{}
)

// rememberPreview keeps a preview for later requests; nothing ever removes one.
func rememberPreview(id int, src string) []byte {
	p := make([]byte, 16<<10)
	copy(p, src)
	previewsMu.Lock()
	previews[id] = p
	previewsMu.Unlock()
	return p
}

func main() {
	var n int
	var nMu sync.Mutex
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(middleware.Recover())
	e.GET("/metrics", echo.WrapHandler(promhttp.Handler()))
	e.GET("/debug/pprof/*", echo.WrapHandler(http.DefaultServeMux))
	e.GET("/preview", func(c echo.Context) error {
		nMu.Lock()
		n++
		id := n
		nMu.Unlock()
		p := rememberPreview(id, c.QueryParam("name"))
		return c.JSON(http.StatusOK, map[string]int{"id": id, "bytes": len(p)})
	})
	e.Listener = svc.Listen()
	log.Fatal(e.Start(""))
}
