// Command echo-memleak is an upload-preview service on echo, its handlers closures in main:
// every request keeps a 64 KiB preview in a package-level map that is never pruned. Its one
// bottleneck is that leak: the heap grows with every request.
package main

import (
	"log"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/apiperf/apiperf/verdict/zoo/internal/echosvc"
	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

var (
	previewsMu sync.Mutex
	previews   = map[int][]byte{}
)

// rememberPreview keeps a preview for later requests; nothing ever removes one.
func rememberPreview(id int, src string) []byte {
	p := make([]byte, 64<<10)
	copy(p, src)
	previewsMu.Lock()
	previews[id] = p
	previewsMu.Unlock()
	return p
}

func main() {
	var n int
	var nMu sync.Mutex
	e := echosvc.New()
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
