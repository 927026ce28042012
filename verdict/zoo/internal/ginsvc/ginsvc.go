// Package ginsvc builds a gin router the way the zoo's gin services share it: release mode,
// recovery, client_golang's default registry on /metrics and net/http/pprof on /debug/pprof.
package ginsvc

import (
	"net/http"
	_ "net/http/pprof" // registers the profiles on http.DefaultServeMux

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// New returns the router with /metrics and /debug/pprof/ mounted.
func New() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(gin.Recovery())
	r.GET("/metrics", gin.WrapH(promhttp.Handler()))
	r.GET("/debug/pprof/*any", gin.WrapH(http.DefaultServeMux))
	return r
}
