// Command echo-errgroup is a report service on echo, its handlers methods on a struct: every
// request fans out over the report's four sections with an errgroup, each goroutine taking a
// SHA-256 of its 512 KiB section. The work runs in goroutines the errgroup starts, not in
// the request's own; the one bottleneck is the checksums' CPU.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"log"
	"net/http"

	"github.com/labstack/echo/v4"
	"golang.org/x/sync/errgroup"

	"github.com/apiperf/apiperf/verdict/zoo/internal/echosvc"
	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

type reports struct {
	sections [4][]byte
}

func (rp *reports) checksum(section []byte) string {
	sum := sha256.Sum256(section)
	return hex.EncodeToString(sum[:])
}

func (rp *reports) get(c echo.Context) error {
	var sums [4]string
	g, _ := errgroup.WithContext(c.Request().Context())
	for i, s := range rp.sections {
		g.Go(func() error {
			sums[i] = rp.checksum(s)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"id": c.Param("id"), "sections": sums})
}

func main() {
	rp := &reports{}
	for i := range rp.sections {
		rp.sections[i] = make([]byte, 512<<10)
		for j := range rp.sections[i] {
			rp.sections[i][j] = byte(i*31 + j)
		}
	}
	e := echosvc.New()
	e.GET("/reports/:id", rp.get)
	e.Listener = svc.Listen()
	log.Fatal(e.Start(""))
}
