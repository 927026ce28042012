// Command fiber-redis is a notifications service on fiber (fasthttp, not net/http), its
// handlers closures in main: every request long-polls a Redis stream for new events
// (XREAD BLOCK 10 ms; Redis ends a block on its timer tick, so about 100 ms) through go-redis
// with a pool of four connections. Redis holds any number of blocked readers without using
// its CPU; the one bottleneck is the pool's size.
package main

import (
	"errors"
	"log"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"github.com/apiperf/apiperf/verdict/zoo/internal/fibersvc"
	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

func main() {
	rdb := redis.NewClient(&redis.Options{Addr: svc.Env("REDIS_ADDR"), PoolSize: 4})
	app := fibersvc.New()
	app.Get("/events/:user", func(c *fiber.Ctx) error {
		streams, err := rdb.XRead(c.UserContext(), &redis.XReadArgs{
			Streams: []string{"events:" + c.Params("user"), "$"}, Count: 10, Block: 10 * time.Millisecond,
		}).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return fiber.NewError(fiber.StatusBadGateway, err.Error())
		}
		var n int
		for _, s := range streams {
			n += len(s.Messages)
		}
		return c.JSON(fiber.Map{"events": n})
	})
	log.Fatal(app.Listener(svc.Listen()))
}
