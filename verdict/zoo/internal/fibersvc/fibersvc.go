// Package fibersvc builds a fiber app the way the zoo's fiber services share it: fiber's pprof
// middleware (net/http/pprof behind fasthttp's adaptor) and client_golang's default registry
// on /metrics.
package fibersvc

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/pprof"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// New returns the app with /metrics and /debug/pprof/ mounted.
func New() *fiber.App {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(pprof.New())
	app.Get("/metrics", adaptor.HTTPHandler(promhttp.Handler()))
	return app
}
