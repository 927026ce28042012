// Package echosvc builds an echo router the way the zoo's echo services share it: no banner,
// recovery, client_golang's default registry on /metrics and net/http/pprof on /debug/pprof.
package echosvc

import (
	"net/http"
	_ "net/http/pprof" // registers the profiles on http.DefaultServeMux

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// New returns the router with /metrics and /debug/pprof/ mounted.
func New() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(middleware.Recover())
	e.GET("/metrics", echo.WrapHandler(promhttp.Handler()))
	e.GET("/debug/pprof/*", echo.WrapHandler(http.DefaultServeMux))
	return e
}
