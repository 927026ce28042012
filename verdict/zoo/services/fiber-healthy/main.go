// Command fiber-healthy is a small profile service on fiber (fasthttp, not net/http), its
// handlers closures in main. Swept at low rates, nothing limits it.
package main

import (
	"log"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/pprof"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

func main() {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(pprof.New())
	app.Get("/metrics", adaptor.HTTPHandler(promhttp.Handler()))
	app.Get("/profile", func(c *fiber.Ctx) error {
		return c.JSON(fiber.Map{"id": 7, "name": "Ada", "roles": []string{"admin", "dev"}})
	})
	log.Fatal(app.Listener(svc.Listen()))
}
