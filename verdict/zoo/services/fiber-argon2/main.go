// Command fiber-argon2 is a sign-up service on fiber (fasthttp, not net/http), its handlers
// closures in main: every request derives an argon2id key with OWASP's parameters (19 MiB,
// two passes). Its one bottleneck is the key derivation's CPU.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"log"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/crypto/argon2"

	"github.com/apiperf/apiperf/verdict/zoo/internal/fibersvc"
	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

func main() {
	app := fibersvc.New()
	app.Get("/signup", func(c *fiber.Ctx) error {
		salt := make([]byte, 16)
		if _, err := rand.Read(salt); err != nil {
			return err
		}
		key := argon2.IDKey([]byte(c.Query("password", "hunter2")), salt, 2, 19*1024, 1, 32)
		return c.JSON(fiber.Map{"salt": hex.EncodeToString(salt), "key": hex.EncodeToString(key)})
	})
	log.Fatal(app.Listener(svc.Listen()))
}
