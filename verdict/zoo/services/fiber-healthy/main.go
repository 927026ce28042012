// Command fiber-healthy is a small profile service on fiber (fasthttp, not net/http), its
// handlers closures in main. Swept at low rates, nothing limits it.
package main

import (
	"log"

	"github.com/gofiber/fiber/v2"

	"github.com/apiperf/apiperf/verdict/zoo/internal/fibersvc"
	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

func main() {
	app := fibersvc.New()
	app.Get("/profile", func(c *fiber.Ctx) error {
		return c.JSON(fiber.Map{"id": 7, "name": "Ada", "roles": []string{"admin", "dev"}})
	})
	log.Fatal(app.Listener(svc.Listen()))
}
